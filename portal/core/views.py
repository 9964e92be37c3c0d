"""Pages of the program core: the home page that routes each role, organizations, the overview."""
from __future__ import annotations

from django.db.models import Count, Q
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe
from django.views.generic import TemplateView

from portal.core import access, sections
from portal.core.choices import CycleStatus, MembershipRole
from portal.core.filtersets import OrganizationFilterSet
from portal.core.generic import ObjectListView, ObjectView, RestrictedQuerysetMixin
from portal.core.models import Organization, active_cycle


@require_safe
def home(request):
    """Send each role where its work is: program managers to the overview, lead SAs to their
    organizations, a customer to their organization's page."""
    user = request.user
    if access.is_program_manager(user) or access.is_staff(user):
        return redirect("review:overview")
    roles = access.roles_of(user)
    if roles.get(access.LEAD_SA):
        return redirect("portal:lead_home")
    customer_orgs = roles.get(access.CUSTOMER, frozenset())
    if len(customer_orgs) == 1:
        # restrict: the one organization the customer belongs to, to send them to its page (never another's)
        org = Organization.objects.restrict(user).get(pk=next(iter(customer_orgs)))
        return redirect(org.get_absolute_url())
    if customer_orgs:
        return redirect("portal:organization_list")
    if access.teams(user):  # a specialist: their team's escalations are their work
        return redirect("engagement:escalation_list")
    return render(request, "portal/no_role.html", status=403)


class OrganizationListView(ObjectListView):
    queryset = Organization.objects.annotate(
        member_count=Count("memberships", filter=Q(memberships__role=MembershipRole.CUSTOMER))
    ).order_by("name")
    filterset_class = OrganizationFilterSet
    template_name = "portal/organization_list.html"
    partial_template_name = "portal/htmx/organization_table.html"
    csv_fields = (("Name", "name"), ("Slug", "slug"), ("Home region", "home_region"))
    csv_filename = "organizations.csv"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["empty_hint"] = self.empty_hint()
        return ctx

    def empty_hint(self):
        """Why the list is empty, and where to go instead (an empty list without a reason is a dead end)."""
        user = self.request.user
        if self.request.GET.get("q", "").strip():
            return _("No organization matches your search.")
        if access.is_specialist(user):
            return format_html(_("You answer escalations rather than belong to an organization: the organizations "
                                 "you work with are on <a href=\"{}\">the escalations page</a>."),
                               reverse("engagement:escalation_list"))
        return _("You do not belong to an organization yet: ask the program manager to add you to yours.")


class OrganizationView(ObjectView):
    queryset = Organization.objects.all()
    template_name = "portal/organization_detail.html"
    slug_url_kwarg = "slug"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        org = self.object
        user = self.request.user
        ctx["can_change"] = access.can(user, access.CHANGE, org)
        ctx["sees_internal"] = access.sees_internal(user, org.pk)
        ctx["show_aws_role"] = ctx["sees_internal"]
        ctx["leads"] = [m.user for m in org.memberships.filter(role=MembershipRole.LEAD_SA).select_related("user")]
        ctx["sections"] = [(s.template, s.builder(self.request, org)) for s in sections.sections(sections.ORGANIZATION_PAGE)]
        return ctx


def left_active_cycle(organization_ids) -> tuple[set, object]:
    """Which of the organizations took part in a cycle but not in the active one (they are winding down), and that cycle
    (one query; a second for the cycle's name only when some left). None left when no cycle is active."""
    # Organizations that never took part in a cycle count as the active cycle's, as on the overview.
    left = set(Organization.objects.filter(pk__in=organization_ids, participations__isnull=False)
               .exclude(participations__cycle__status=CycleStatus.ACTIVE).values_list("pk", flat=True))
    active = active_cycle() if left else None
    return (left, active) if active is not None else (set(), None)


class LeadHomeView(RestrictedQuerysetMixin, TemplateView):
    """The organizations a lead SA is assigned to, with what is open and ageing in them (registered sections)."""

    template_name = "portal/lead_home.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        led = access.led_organizations(self.request.user)
        ctx["organizations"] = self.visible(Organization.objects.filter(pk__in=led))
        ctx["left_ids"], ctx["active_cycle"] = left_active_cycle(led)
        ctx["sections"] = [(s.template, s.builder(self.request)) for s in sections.sections(sections.LEAD_HOME)]
        return ctx

