"""Remediation pages: the panel on a cluster's health page (faults, recommended actions, the proposal form, the
actions with their consent buttons), an action's page with its steps, and the organization's consent policy."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext

from clusters.health.models import GpuFault, NodeHealth
from clusters.models import Cluster
from clusters.remediation import consent, failure, refusals, rules, services
from clusters.remediation.choices import PolicyChangeState
from clusters.remediation.forms import DeclineForm, PolicyChangeDeclineForm, ProposeForm, RemediationPolicyForm
from clusters.remediation.models import RemediationAction, RemediationPolicy, RemediationPolicyChange
from portal.core import access, submissions, versions
from portal.core.generic import ObjectActionView, ObjectPageView, ObjectView
from portal.core.models import Organization

ACTIONS_SHOWN = 20


class _Panel:
    """The panel of a cluster's health page: its faults, the recommended actions, the proposal form, the actions."""

    panel_template = "remediation/htmx/cluster_panel.html"

    def panel(self, cluster, form=None, status=200):
        return render(self.request, self.panel_template, self.panel_context(cluster, form), status=status)

    def panel_context(self, cluster, form=None) -> dict:
        user, visible = self.request.user, self.visible
        faults = list(visible(GpuFault.objects.filter(cluster=cluster, cleared_at__isnull=True))
                      .order_by("-severity_rank", "hostname")[:200])
        remediating = set(visible(RemediationAction.objects.filter(
            cluster=cluster, fault_rows__outcome="remediating", fault_rows__fault__in=faults))
            .values_list("fault_rows__fault_id", flat=True))
        for f in faults:
            f.recommended = rules.recommend(f)
            f.remediating = f.pk in remediating
        actions = list(visible(RemediationAction.objects.filter(cluster=cluster))
                       .select_related("proposed_by", "approved_by")[:ACTIONS_SHOWN])
        policy = rules.policy_for(cluster.organization_id)
        for a in actions:
            a.told = failure.told(a, policy.cooldown_hours)
            a.shown_refusal = refusals.shown(a)
            a.shown_error = a.error if access.sees_internal(user, cluster.organization_id) else a.told
            a.can_approve = a.state == "proposed" and services.may_approve(user, a)
            a.can_cancel = a.is_open and a.state in ("proposed", "approved") and access.can(user, access.CHANGE, a)
        can_propose = services.may_propose(user, cluster)
        hosts = list(NodeHealth.objects.filter(cluster=cluster).order_by("-rank", "hostname")
                     .values_list("hostname", flat=True)[:500]) if can_propose else []
        kinds = rules.KINDS_BY_ORCHESTRATOR.get(cluster.orchestrator, ())
        recommended = rules.recommend_for(faults)
        if can_propose and form is None:
            initial = {"kind": recommended or "reboot", "nodes": sorted({f.hostname for f in faults if f.recommended})[:1]}
            form = ProposeForm(initial=initial, hostnames=hosts, kinds=kinds)
        waiting = (visible(RemediationPolicyChange.objects.filter(organization_id=cluster.organization_id,
                                                                  state=PolicyChangeState.PENDING)).exists())
        return {"object": cluster, "cluster": cluster, "faults": faults, "actions": actions, "form": form,
                "change_waiting": waiting,
                "can_propose": can_propose, "recommended": recommended, "policy": policy,
                "limit": rules.node_limit(policy, cluster),
                "what": [(k, *rules.describe(cluster.orchestrator, k)) for k in kinds]}


class ClusterPanelView(_Panel, ObjectPageView):
    """The remediation panel of a cluster's health page (htmx loads it next to the page)."""

    queryset = Cluster.objects.select_related("organization")

    def get(self, request, pk):
        return self.panel(self.object)


class ProposeView(_Panel, ObjectActionView):
    """Lead SAs and staff: propose an action on nodes of the cluster (answers the panel to htmx)."""

    queryset = Cluster.objects.select_related("organization")
    once = True

    def act(self, request, cluster):
        services.refuse_proposal(request.user, cluster)
        hosts = NodeHealth.objects.filter(cluster=cluster).values_list("hostname", flat=True)
        form = ProposeForm(request.POST, hostnames=hosts, kinds=rules.KINDS_BY_ORCHESTRATOR[cluster.orchestrator])
        if not form.is_valid():
            return self.panel(cluster, form, status=400)
        data = form.cleaned_data
        action, _created = services.propose(cluster, kind=data["kind"], nodes=data["nodes"], actor=request.user,
                                            reason=data["reason"])
        submissions.record(request, action, action.get_absolute_url())
        if request.htmx:
            return self.panel(cluster)
        messages.info(request, refusals.shown(action) or gettext("Remediation %(number)s: %(state)s.")
                      % {"number": action.pk, "state": action.get_state_display().lower()})
        return redirect(action)

    def replay_submission(self, request, earlier):
        if request.htmx:
            return self.panel(self.get_object())
        return submissions.replay_page(request, earlier)


class ActionView(ObjectView):
    queryset = RemediationAction.objects.select_related("cluster__organization", "proposed_by", "approved_by")
    template_name = "remediation/action_detail.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        action, user = self.object, self.request.user
        internal = access.sees_internal(user, action.organization_id)
        ctx["steps"] = list(action.steps.all())
        ctx["internal"] = internal
        ctx["faults"] = list(action.fault_rows.select_related("fault"))
        ctx["told"] = failure.told(action)
        ctx["refusal"] = refusals.shown(action)
        ctx["shown_error"] = action.error if internal else ctx["told"]
        ctx["can_approve"] = action.state == "proposed" and services.may_approve(user, action)
        ctx["can_cancel"] = action.state in ("proposed", "approved") and access.can(user, access.CHANGE, action)
        ctx["what"], ctx["takes"] = rules.describe(action.cluster.orchestrator, action.kind)
        ctx["escalation"] = action.escalation if internal else None
        ctx["case"] = action.escalation.interaction if internal and action.escalation_id else None
        return ctx


class _Decide(_Panel, ObjectActionView):
    """A POST that moves an action (approve, decline, cancel): back to the action, or the panel to htmx."""

    queryset = RemediationAction.objects.select_related("cluster")

    def decide(self, request, action):
        raise NotImplementedError

    def act(self, request, action):
        try:
            self.decide(request, action)
        except services.RequestRefused as exc:
            if request.htmx:
                return HttpResponse(str(exc), status=409)
            messages.error(request, str(exc))
        if request.htmx:
            return self.panel(action.cluster)
        return redirect(action)


class ApproveView(_Decide):
    def decide(self, request, action):
        services.approve(action, request.user)


class DeclineView(_Decide):
    def decide(self, request, action):
        form = DeclineForm(request.POST)
        services.decline(action, request.user, form.cleaned_data["why"] if form.is_valid() else "")


class CancelView(_Decide):
    def decide(self, request, action):
        services.cancel(action, request.user)


class SupportCaseView(_Decide):
    """Open an AWS Support case with the escalation's evidence (lead SAs and staff)."""

    def decide(self, request, action):
        if services.open_support_case(action, request.user):
            messages.info(request, gettext("Opening the AWS Support case: it shows here once AWS answers."))


class _Change:
    """The change of the consent waiting for a customer engineer, beside the policy."""

    def change_context(self, organization) -> dict:
        """The change waiting for a customer engineer (as the user may see it) and whether the user may decide it."""
        changes = self.visible(RemediationPolicyChange.objects.filter(organization=organization))
        change = changes.filter(state=PolicyChangeState.PENDING).select_related("proposed_by").first()
        return {"organization": organization, "change": change, "policy_now": consent.current(organization.pk),
                "can_decide": change is not None and consent.may_decide(self.request.user, change),
                "decided": list(changes.exclude(state=PolicyChangeState.PENDING)
                                .select_related("proposed_by", "decided_by")[:5])}


class PolicyView(_Change, ObjectPageView):
    """The organization's consent policy: lead SAs set it; a change that widens it waits for a customer engineer
    of the organization, who approves or declines it here (the page, or its htmx partial with the change)."""

    queryset = Organization.objects.all()
    pk_url_kwarg = "org_pk"
    template_name = "remediation/policy_form.html"
    partial_name = "remediation/htmx/policy_change.html"

    def _policy(self, request, org_pk):
        organization = self.object
        policy = RemediationPolicy.objects.filter(organization=organization).first() or \
            RemediationPolicy(organization=organization)
        may_change = access.can_in_organization(request.user, access.CHANGE, RemediationPolicy, organization.pk)
        return organization, policy, may_change

    def render_page(self, request, organization, policy, form, may_change, status=200, **extra):
        return render(request, self.template_name, {
            **self.change_context(organization), "organization": organization, "policy": policy, "form": form,
            "may_change": may_change, "floor": consent.cooldown_floor(), **extra}, status=status)

    def get(self, request, org_pk):
        organization, policy, may_change = self._policy(request, org_pk)
        if request.htmx:
            return render(request, self.partial_name, self.change_context(organization))
        form = RemediationPolicyForm(instance=policy)
        versions.add_field(form, policy)
        return self.render_page(request, organization, policy, form, may_change)

    def post(self, request, org_pk):
        organization, policy, may_change = self._policy(request, org_pk)
        if not may_change:
            raise PermissionDenied(gettext("Only the organization's lead SAs set its remediation policy."))
        form = RemediationPolicyForm(request.POST, instance=policy)
        versions.add_field(form, policy)
        if not form.is_valid():
            return self.render_page(request, organization, policy, form, True, status=400)
        change = None
        with transaction.atomic():
            changes = versions.conflict(form, policy)  # locks the policy's row
            if changes is None:
                values = {name: form.cleaned_data[name] for name in consent.FIELDS}
                _saved, change = consent.save(organization, values, request.user)
        if changes is not None:  # changed since the page was opened: the user's values on the stored version
            stored = form.current_instance
            again = RemediationPolicyForm(versions.reapply_data(form, stored), instance=stored)
            versions.add_field(again, stored)
            return self.render_page(request, organization, stored, again, True, status=409,
                                    version_conflict=changes)
        if change is not None:
            messages.info(request, gettext("The change gives the portal more power over the organization's nodes: "
                                           "it takes effect when a customer engineer of the organization approves "
                                           "it."))
        else:
            messages.success(request, gettext("Saved the remediation policy."))
        return redirect("remediation:policy_edit", org_pk=organization.pk)


class _DecideChange(_Change, ObjectActionView):
    """A customer engineer's answer to a change of the consent: back to the policy, or the partial to htmx."""

    queryset = RemediationPolicyChange.objects.select_related("organization", "proposed_by")

    def decide(self, request, change):
        raise NotImplementedError

    def act(self, request, change):
        try:
            done = self.decide(request, change)
        except consent.ChangeClosed as exc:
            if request.htmx:
                return HttpResponse(str(exc), status=409)
            messages.error(request, str(exc))
        else:
            if not request.htmx:
                messages.success(request, done)
        if request.htmx:
            return render(request, PolicyView.partial_name, self.change_context(change.organization))
        return redirect("remediation:policy_edit", org_pk=change.organization_id)


class PolicyChangeApproveView(_DecideChange):
    def decide(self, request, change):
        consent.approve(change, request.user)
        return gettext("Approved: the remediation policy has changed.")


class PolicyChangeDeclineView(_DecideChange):
    def decide(self, request, change):
        form = PolicyChangeDeclineForm(request.POST)
        consent.decline(change, request.user, form.cleaned_data["why"] if form.is_valid() else "")
        return gettext("Declined: the remediation policy stays as it was.")
