"""Every create form and create API call, walked: the same submission sent twice by a role that may write
makes what one makes, and the repeat answers as the first did (pages: the same redirect; the API: the same
status and body). Payloads are the access matrix's (tests/access_cases.py), valid for organization A.

Races of N identical requests on PostgreSQL are in test_submissions.py (they need real commits)."""
from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.urls import reverse

from portal.core import submissions
from tests.access_cases import ROUTES
from tests.portal.test_access_matrix import matrix, record_writes  # noqa: F401 - the matrix's module world

PAGES = (
    "interactions:interaction_quick_log", "interactions:interaction_add", "interactions:interaction_comment",
    "interactions:interaction_escalate", "engagement:escalation_transition", "workloads:changerequest_add",
    "workloads:changerequest_decide", "engagement:outcomes", "engagement:trainedmodel_add",
    "enablement:enablement_add", "enablement:enablement_attendance", "health:validationrun_add",
    "review:review_freeze", "review:actionitem_add", "engagement:cycle_start_next", "workloads:workload_add",
    "workloads:quota_add", "workloads:reservation_add",
    "remediation:action_propose", "health:validationjob_add",
    "calls:call_add", "calls:call_award", "calls:application_start", "calls:application_submit",
    "calls:application_assign", "funder:report_add", "funder:report_issue",
    "funder:part_comment", "sso:provider_add", "accounting:request_fulfil", "sso:administrator_list",
    "factors:api_tokens",
)
APIS = (
    "interactions-api:interaction-list", "interactions-api:interaction-history", "interactions-api:interaction-escalate",
    "enablement-api:enablementattendance-list", "engagement-api:escalation-list",
    "engagement-api:escalation-transition", "engagement-api:milestone-list", "engagement-api:trainedmodel-list",
    "engagement-api:cycle-start-next", "workloads-api:quotachangerequest-list",
    "workloads-api:quotachangerequest-decide", "workloads-api:workload-list", "workloads-api:instancequota-list",
    "workloads-api:capacityreservation-list", "health-api:validationrun-list", "portal-api:organization-list",
    "remediation-api:remediationaction-list", "health-api:validationjob-list",
    "calls-api:call-list", "calls-api:call-award", "calls-api:application-list", "calls-api:application-submit",
    "funder-api:comment-list", "accounting-api:reservationrequest-fulfil",
)
PREFERRED = ("lead_a", "pm", "customer_a", "specialist", "staff")


def _writer(case) -> str:
    return next(role for role in PREFERRED if case.succeeds(role, "POST") or role in case.writers)


def _post(client, url: str, case, payload: dict, key: str):
    if case.api:
        return client.post(url, data=json.dumps(payload), content_type="application/json",
                           headers={submissions.HEADER: key})
    return client.post(url, data={**payload, submissions.FIELD: key})


def _same_answer(first, second, api: bool) -> None:
    assert second.status_code == first.status_code, (first.status_code, second.status_code)
    if api:
        assert json.loads(second.content) == json.loads(first.content)
        assert second["Idempotent-Replayed"] == "true"
    else:
        assert second.get("Location") == first.get("Location")


@pytest.mark.parametrize("name", PAGES + APIS)
def test_a_create_sent_twice_with_one_key_writes_once(name, matrix, db, client):  # noqa: F811
    case = ROUTES[name]
    role = _writer(case)
    client.cookies[settings.SESSION_COOKIE_NAME] = matrix.sessions[role]
    url = reverse(name, kwargs=case.kwargs(matrix.objs))
    payload = case.payload(matrix.objs)
    with record_writes() as first_writes:
        first = _post(client, url, case, payload, f"{name}-once")
    assert first.status_code < 400, f"{role} {url}: {first.status_code} {first.content[:300]!r}"
    assert any("portal_submission" in w for w in first_writes), f"{url}: the key was not recorded"
    with record_writes() as second_writes:
        second = _post(client, url, case, payload, f"{name}-once")
    assert not second_writes, f"{role} {url}: the repeat wrote {second_writes}"
    _same_answer(first, second, case.api)


def test_every_create_route_is_walked():
    """Each route whose writer's POST makes a row of its own is in the walk, or listed here as not a create."""
    not_creates = {
        "review:review_notes", "review:actionitem_done", "health:cluster_health_settings", "health:rotate_token",
        "health:gpufault_link", "workloads:workload_section", "interactions:interaction_sync",
        "interactions:interaction_suggest_tags", "clusters:launch", "clusters:cluster_retry", "clusters:cluster_delete",
        "clusters-api:cluster-list", "clusters-api:cluster-retry", "health-api:ingest", "health-api:rotate-token",
        "engagement:slack_interactivity", "engagement:slack_command", "api-token-revoke", "api-token", "favicon", "login", "logout",
    }
    # Keyed by its sender, not by us: an SNS message carries its own MessageId, and a repeat is refused with 409.
    not_creates.add("health-api:alerts-sns")
    # A running validation job posts its outputs here with its own token; each output is taken once (409 after).
    not_creates.add("health-api:validation-output")
    # The controller agent (its cluster's token): a poll claims queued items and a result finishes one, once (a repeat
    # is answered without effect); neither makes a row.
    not_creates |= {"health-api:agent-poll", "health-api:agent-result"}
    # Moves or cancels the scheduled start of one cycle (its form carries the row's version): no row of its own.
    not_creates.add("engagement:cycle_schedule")
    # An organization's accounting thresholds: one row per organization, edited with its version.
    not_creates.add("accounting:settings")
    # Opens the AWS Support case of an escalated action once per interaction: a repeat finds the case opened.
    not_creates.add("remediation:action_support_case")
    # Cancels one validation (compare-and-set on its state): no row of its own; a repeat finds it cancelled.
    not_creates |= {"health:validationjob_cancel", "health-api:validationjob-cancel"}
    # Sets the reader's language (a preference and a cookie); no row of its own.
    not_creates.add("set_language")
    # Consent and the policy move or set one row; they create nothing.
    not_creates |= {"remediation:action_approve", "remediation:action_decline", "remediation:action_cancel",
                    "remediation:policy_edit", "remediation-api:remediationaction-approve",
                    "remediation-api:remediationaction-decline", "remediation-api:remediationaction-cancel"}
    # A customer engineer's answer to a change of the consent: compare-and-set on its state; a repeat finds it
    # answered (409). A policy save makes at most one waiting change (a repeat replaces it with the same values).
    not_creates |= {"remediation:policy_change_approve", "remediation:policy_change_decline",
                    "remediation-api:remediationpolicychange-approve",
                    "remediation-api:remediationpolicychange-decline"}
    # A late edit's leave and a reviewer's scores or conflict change one row; they create nothing.
    not_creates |= {"calls:application_reopen", "calls:review_edit", "calls-api:application-reopen",
                    "calls-api:review-score", "calls-api:review-conflict"}
    # Issuing a report is a compare-and-set on its status: a repeat finds it issued and answers it unchanged.
    not_creates.add("funder-api:report-issue")
    # A correction drafts one version per issued report: a repeat answers the draft already made
    # (tests/funder); the matrix's report is a draft, which is not corrected.
    not_creates |= {"funder:report_correct", "funder-api:report-correct"}
    # A person's own second factor and signing in: a code checked against the person's own device (the setup page
    # keeps one pending device per person, a repeat finds it), new recovery codes replace the old ones, and
    # starting a sign-in writes nothing but the session; a SAML answer is accepted once (its assertion id is kept:
    # a repeat is refused, tests/sso/test_saml.py).
    not_creates |= {"factors:factors", "factors:setup", "factors:verify", "sso:start", "sso:saml_acs"}
    # Passkeys: a registration answers a challenge the session holds once (a repeat finds it spent: 400) and the
    # credential id is unique; confirming changes the counter; removing deletes.
    not_creates |= {"factors:passkey_register", "factors:passkey_verify", "factors:passkey_delete"}
    # Sending a report: the matrix's report is a draft, which is not sent (tests/funder sends one twice with one
    # key and finds one sending).
    not_creates |= {"funder:report_send", "funder-api:report-send"}
    # Declining a reservation request is a compare-and-set on its state: a repeat finds it decided (409).
    not_creates |= {"accounting:request_decline", "accounting-api:reservationrequest-decline"}
    # A person's own API token: confirming sets its one confirmation row (a repeat moves its time), revoking deletes.
    # Removing an organization administrator deletes the designation.
    not_creates |= {"factors:api_token_confirm", "factors:api_token_revoke", "sso:administrator_remove"}
    posted = {name for name, case in ROUTES.items() if case.payload is not None and not name.endswith(("_edit", "-detail"))}
    missing = sorted(posted - set(PAGES) - set(APIS) - not_creates)
    assert not missing, f"create routes the walk does not cover: {missing}"
