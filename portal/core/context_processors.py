"""Role flags for the navigation, and the chart scripts' texts (an app's own badges are in its own context
processors: ``workloads.context_processors``)."""
from django.utils.translation import gettext, gettext_noop

from portal.core import access


def roles(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"portal_roles": {}}
    org_roles = access.roles_of(user)
    return {
        "portal_roles": {
            "customer": bool(org_roles.get(access.CUSTOMER)),
            "lead_sa": bool(org_roles.get(access.LEAD_SA)),
            "program_manager": access.is_program_manager(user),
            "staff": access.is_staff(user),
            "specialist": bool(org_roles.get(access.SPECIALIST)),
            "org_admin": bool(org_roles.get(access.ORG_ADMIN, frozenset()) & org_roles.get(access.CUSTOMER, frozenset())),
            # Nothing but a specialist team: the organization list would be empty (their work is escalations).
            "only_specialist": bool(org_roles.get(access.SPECIALIST)) and not (
                org_roles.get(access.CUSTOMER) or org_roles.get(access.LEAD_SA)
                or access.is_program_manager(user) or access.is_staff(user)),
        }
    }


def csp_nonce(request) -> dict:
    """The request's CSP nonce under the name django-htmx's script tag looks for."""
    return {"csp_nonce": getattr(request, "csp_nonce", None)}


# What the chart scripts (static/js/*-charts.js) write, by their English text. Pages with charts print it with
# ``{{ js_strings|json_script:"portal-js-strings" }}`` and the scripts look each text up there (the English is the
# fallback), so scripts need no catalogue of their own and no inline code.
JS_STRINGS = (
    gettext_noop("Healthy GPU share (%)"), gettext_noop("GPUs with XID errors"), gettext_noop("Missing GPUs"),
    gettext_noop("Row remap failures"), gettext_noop("Thermal violations"), gettext_noop("Nodes not healthy"),
    gettext_noop("Out-of-place busbw (GB/s)"), gettext_noop("In-place busbw (GB/s)"),
    gettext_noop("Expected at ≥ 1 GiB (GB/s)"), gettext_noop("message size"),
    gettext_noop("Open interactions"), gettext_noop("Open interactions per week"), gettext_noop("Week of"),
    gettext_noop("Open"), gettext_noop("Launches"), gettext_noop("Failed"), gettext_noop("Launches per day"),
    gettext_noop("Day"), gettext_noop("Clusters"), gettext_noop("Running"), gettext_noop("Quota"),
    gettext_noop("Quota use by instance type"), gettext_noop("Instances"), gettext_noop("Instance type"),
    gettext_noop("New GPU faults"), gettext_noop("GPU faults per week"), gettext_noop("Faults"),
)


def js_strings(request) -> dict:
    """The chart scripts' texts in the page's language, {English: translation}: a callable, so it is worked out
    only on the pages that print it."""
    return {"js_strings": lambda: {text: gettext(text) for text in JS_STRINGS}}
