"""Role flags for the navigation."""
from portal import access


def roles(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"portal_roles": {}}
    org_roles = access._roles(user)
    return {
        "portal_roles": {
            "customer": bool(org_roles.get(access.CUSTOMER)),
            "lead_sa": bool(org_roles.get(access.LEAD_SA)),
            "program_manager": access.is_program_manager(user),
            "staff": access.is_staff(user),
            "specialist": bool(org_roles.get(access.SPECIALIST)),
            # Nothing but a specialist team: the organization list would be empty (their work is escalations).
            "only_specialist": bool(org_roles.get(access.SPECIALIST)) and not (
                org_roles.get(access.CUSTOMER) or org_roles.get(access.LEAD_SA)
                or access.is_program_manager(user) or access.is_staff(user)),
        }
    }


def pending_quota_requests(request) -> dict:
    """How many quota requests wait for a decision (the program manager's navigation shows it). A callable,
    so the count query runs only on pages whose navigation displays it."""
    user = getattr(request, "user", None)
    cache: list[int] = []

    def count() -> int:
        from workloads.choices import RequestStatus
        from workloads.models import QuotaChangeRequest

        if not cache:
            cache.append(QuotaChangeRequest.objects.restrict(user).filter(status=RequestStatus.PENDING).count())
        return cache[0]

    return {"pending_quota_requests": count}


def csp_nonce(request) -> dict:
    """The request's CSP nonce under the name django-htmx's script tag looks for."""
    return {"csp_nonce": getattr(request, "csp_nonce", None)}
