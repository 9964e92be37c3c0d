"""Route cases of remediation: proposals on a cluster's nodes, the customer's consent, the organization's policy."""
from __future__ import annotations

from tests.clusters.access_cases import LAZY_CLUSTER
from tests.health.access_cases import _CL, _health_report_cached
from tests.routecases import (
    _UNSEEN_ORG,
    LEAD,
    LIST,
    OBJECTS,
    ROUTES,
    Case,
    _memo,
    _static,
    _writes,
)

# --- remediation: proposals on a cluster's nodes, the customer's consent, the organization's policy -------------
_FAULTY_HOST = "ip-ZZ-ORG-A-SECRET"


def _remediation_action(w):
    from clusters.remediation.models import RemediationAction, RemediationNode

    cluster = LAZY_CLUSTER(w)
    _health_report_cached(w)
    action = RemediationAction.objects.create(organization=w.org_a, cluster=cluster, kind="reboot",
                                              nodes=[_FAULTY_HOST], key="access-case", reason="ZZ-ORG-A-SECRET why")
    RemediationNode.objects.create(action=action, cluster=cluster, hostname=_FAULTY_HOST)
    return action


OBJECTS["remediation_action"] = lambda w: _memo(w, "remediation_action", _remediation_action)
_ACT = lambda o: {"pk": o["remediation_action"].pk}  # noqa: E731
ROUTES.update({
    "remediation:cluster_panel": Case(kwargs=_CL),
    "remediation:action_propose": Case(kwargs=_CL),
    "remediation:action_detail": Case(kwargs=_ACT),
    "remediation:action_approve": Case(kwargs=_ACT),
    "remediation:action_decline": Case(kwargs=_ACT),
    "remediation:action_cancel": Case(kwargs=_ACT),
    "remediation:policy_edit": Case(kwargs=lambda o: {"org_pk": o["organization"].pk}),
    "remediation-api:remediationaction-list": Case(api=True, foreign=LIST),
    "remediation-api:remediationaction-detail": Case(api=True, kwargs=_ACT),
    "remediation-api:remediationaction-approve": Case(api=True, kwargs=_ACT),
    "remediation-api:remediationaction-decline": Case(api=True, kwargs=_ACT),
    "remediation-api:remediationaction-cancel": Case(api=True, kwargs=_ACT),
})
_CONSENT = {"customer_a", "staff"}
_writes("remediation:action_propose", _static({"nodes": [_FAULTY_HOST], "kind": "drain"}), LEAD)
_writes("remediation:action_approve", _static({}), _CONSENT, kwargs=_ACT)
_writes("remediation:action_decline", _static({"why": "not now"}), _CONSENT, kwargs=_ACT)
_writes("remediation:action_cancel", _static({}), LEAD, kwargs=_ACT)
_writes("remediation:policy_edit", _static({"mode": "lead_sa", "max_nodes": 1, "cooldown_hours": 24}), LEAD)
_writes("remediation-api:remediationaction-list",
        lambda o: {"cluster": o["cluster"].pk, "nodes": [_FAULTY_HOST], "kind": "drain"}, LEAD, success=201,
        refused=_UNSEEN_ORG)
_writes("remediation-api:remediationaction-approve", _static({}), _CONSENT, success=200)
_writes("remediation-api:remediationaction-decline", _static({"why": "not now"}), _CONSENT, success=200)
_writes("remediation-api:remediationaction-cancel", _static({}), LEAD, success=200)


# Opening an AWS Support case from an escalated action: lead SAs and staff; the access case's action was not
# escalated, so a writer is sent back to the action with the reason and nothing is written.
ROUTES["remediation:action_support_case"] = Case(kwargs=_ACT)
_writes("remediation:action_support_case", _static({}), LEAD, success=302, writes_rows=False)


# A change of organization A's consent that widens it, waiting for a customer engineer: only customer_a answers it
# (staff's reach is not the customer's consent; the lead SA who proposed it may not approve it).
def _policy_change(w):
    from clusters.remediation.models import RemediationPolicyChange

    return RemediationPolicyChange.objects.create(
        organization=w.org_a, mode="lead_sa", max_nodes=1, cooldown_hours=24, proposed_by=w.lead_a,
        before={"mode": "approval", "automatic_kinds": [], "max_nodes": 1, "cooldown_hours": 24},
        widens=["consent approval → lead_sa (ZZ-ORG-A-SECRET)"])


OBJECTS["policy_change"] = lambda w: _memo(w, "policy_change", _policy_change)
_PC = lambda o: {"pk": o["policy_change"].pk}  # noqa: E731
ROUTES.update({
    "remediation:policy_change_approve": Case(kwargs=_PC),
    "remediation:policy_change_decline": Case(kwargs=_PC),
    "remediation-api:remediationpolicychange-list": Case(api=True, foreign=LIST),
    "remediation-api:remediationpolicychange-detail": Case(api=True, kwargs=_PC),
    "remediation-api:remediationpolicychange-approve": Case(api=True, kwargs=_PC),
    "remediation-api:remediationpolicychange-decline": Case(api=True, kwargs=_PC),
})
_CUSTOMER = {"customer_a"}
_writes("remediation:policy_change_approve", _static({}), _CUSTOMER, kwargs=_PC)
_writes("remediation:policy_change_decline", _static({"why": "not this quarter"}), _CUSTOMER, kwargs=_PC)
_writes("remediation-api:remediationpolicychange-approve", _static({}), _CUSTOMER, success=200)
_writes("remediation-api:remediationpolicychange-decline", _static({"why": "not this quarter"}), _CUSTOMER,
        success=200)
