"""Property-based API fuzzing with schemathesis against /api/schema/, as every role.

A live server serves the real API; schemathesis reads the OpenAPI schema the portal publishes and runs
every one of its checks (no 5xx, responses and status codes as documented, bad input refused, schema-valid
input accepted, auth not ignored ...) in two phases:

- per operation: generated requests for every operation (FUZZ_EXAMPLES per operation, default 6);
- stateful: schemathesis' state machine follows the schema's links (create → read/change/delete, a
  list's first row → its operations, an object → its children and related objects) in scenarios of at
  most FUZZ_STEPS calls (FUZZ_SCENARIOS scenarios per role), so ids are real ones the caller just made
  or found.

The numbers are bounded so the run fits in CI.
"""
from __future__ import annotations

import os

import hypothesis
import pytest
import schemathesis
from django.core.management import call_command
from hypothesis import HealthCheck
from knox.models import AuthToken

MAX_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))
SCENARIOS = int(os.environ.get("FUZZ_SCENARIOS", "10"))
STEPS = int(os.environ.get("FUZZ_STEPS", "6"))
ROLES = ["customer_a", "lead_a", "pm", "staff"]
# IDS: the generated ids are mostly small integers, and whether id 1 is a row (a ready cluster, say) decides what
# an operation is asked. Ids start at 1 in every run (the `ids_from_one` fixture), so the same requests meet the
# same rows whichever tests a process ran before (without it a 400 for a ready cluster's retry showed only when
# this test ran first).
CHECKS = None  # every check schemathesis has
EXCLUDED: list = []  # none
# Signs out the token that calls it: run with a token of its own per request, never inside a scenario.
REVOKE = "auth_token_revoke_create"
# Where the API rightly refuses schema-valid data for a reason OpenAPI cannot express (which rows exist, rules
# across fields or across rows), that operation (and only it) may also answer the status below to
# "schema-valid data accepted"; every other check still holds for it, the 400's documented shape included.
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]  # schemathesis' own default
EXISTS = "names related rows by id or slug (organization, quota, interaction ...): only rows that exist and the caller may see are valid"
REFUSALS = {
    "auth_token_create": (["400"], "any username and password are schema-valid; only real credentials get a token"),
    "calls_calls_create": (["400"], "a call's title is unique (a rule across rows); each criterion is named once (a "
                                    "rule across a list's items)"),
    "calls_calls_update": (["400"], "a call's title is unique (a rule across rows); each criterion is named once (a "
                                    "rule across a list's items)"),
    "calls_calls_partial_update": (["400"], "a call's title is unique (a rule across rows); each criterion is named "
                                            "once (a rule across a list's items)"),
    "clusters_clusters_create": (["400"], EXISTS + "; the blueprint must exist"),
    "clusters_clusters_destroy": (["400"], "a ready cluster is deleted only with its name as `confirm` (data, not shape)"),
    "engagement_cycles_start_next_create": (["400"], "a new cycle needs at least one organization that continues (data, not shape)"),
    "engagement_escalations_create": (["400"], EXISTS),
    "engagement_milestones_create": (["400"], EXISTS),
    "engagement_milestones_update": (["400"], EXISTS),
    "engagement_milestones_partial_update": (["400"], EXISTS),
    "engagement_trained_models_create": (["400"], EXISTS),
    "engagement_trained_models_update": (["400"], EXISTS),
    "engagement_trained_models_partial_update": (["400"], EXISTS),
    "funder_comments_create": (["400"], EXISTS + " (the part commented on)"),
    "health_validation_runs_create": (["400"], EXISTS),
    "health_remediations_create": (["400"], EXISTS + "; the nodes must be hosts that reported on the cluster"),
    "health_validations_create": (["400"], EXISTS + "; the cluster must be a ready Slurm cluster and the nodes hosts "
                                                    "that reported on it"),
    "health_alerts_sns_create": (["400"], "an SNS message is JSON with signed fields and a recent timestamp (data, not shape)"),
    "interactions_enablement_attendances_create": (["400"], EXISTS),
    "portal_organizations_create": (["400"], "name, slug and AWS account are unique across organizations (a rule across rows)"),
    "portal_organizations_update": (["400"], "name, slug and AWS account are unique across organizations (a rule across rows)"),
    "portal_organizations_partial_update": (["400"], "name, slug and AWS account are unique across organizations (a rule across rows)"),
    "interactions_interactions_create": (["400"], EXISTS),
    "interactions_interactions_update": (["400"], EXISTS),
    "interactions_interactions_partial_update": (["400"], EXISTS),
    "workloads_quota_requests_create": (["400"], EXISTS + "; start before end (a rule across fields)"),
    "workloads_quota_requests_update": (["400"], EXISTS + "; start before end (a rule across fields)"),
    "workloads_quota_requests_partial_update": (["400"], EXISTS + "; start before end (a rule across fields)"),
    "workloads_quota_requests_decide_create": (["400"], "a rejection needs a comment (a rule across fields)"),
    "workloads_quotas_create": (["400"], EXISTS + "; start before end (a rule across fields)"),
    "workloads_quotas_update": (["400"], EXISTS + "; start before end (a rule across fields)"),
    "workloads_quotas_partial_update": (["400"], EXISTS + "; start before end (a rule across fields)"),
    "workloads_reservations_create": (["400"], EXISTS + "; start before end (a rule across fields)"),
    "workloads_reservations_update": (["400"], EXISTS + "; start before end (a rule across fields)"),
    "workloads_reservations_partial_update": (["400"], EXISTS + "; start before end (a rule across fields)"),
    "workloads_workloads_create": (["400"], EXISTS + "; 'other' orchestrator or framework needs its name (across fields)"),
    "workloads_workloads_update": (["400"], EXISTS + "; 'other' orchestrator or framework needs its name (across fields)"),
    "workloads_workloads_partial_update": (["400"], EXISTS + "; 'other' orchestrator or framework needs its name (across fields)"),
}


def _config(authorization: str) -> schemathesis.Config:
    return schemathesis.Config.from_dict({
        # The role's API token, as the schema's knoxApiToken scheme: schemathesis then knows the request's
        # credentials are real (and generates no session cookie of its own).
        "auth": {"openapi": {"knoxApiToken": {"api_key": authorization}}},
        "operations": [
            {"include-operation-id": operation_id,
             "checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED + statuses}}}
            for operation_id, (statuses, _reason) in REFUSALS.items()
        ],
    })


def _settings(**kwargs) -> hypothesis.settings:
    return hypothesis.settings(deadline=None, database=None, derandomize=True,
                               suppress_health_check=list(HealthCheck), **kwargs)


def _token(user) -> str:
    _, token = AuthToken.objects.create(user=user)
    return f"Token {token}"


@pytest.fixture
def ids_from_one(transactional_db):
    """Empty every table and restart its ids at 1 (see IDS). A flush, not pytest-django's ``reset_sequences``: that
    restarts the sequences only, and where this is the first committing test of its process the rows the
    migrations wrote (the first cycle) are still there, so on PostgreSQL the next insert took id 1 again."""
    call_command("flush", interactive=False, verbosity=0)


@pytest.fixture
def api(ids_from_one, world, live_server):
    from tests.access_cases import OBJECTS
    from tests.portal.test_routes import LazyObjects

    assert (world.org_a.pk, world.org_b.pk) == (1, 2)  # IDS
    objs = LazyObjects(world)
    for key in OBJECTS:  # give every operation organization A's objects to find; a broken builder fails here
        objs[key]
    return world, live_server.url


def _load(base_url: str, authorization: str):
    return schemathesis.openapi.from_url(f"{base_url}/api/schema/", headers={"Authorization": authorization},
                                         config=_config(authorization))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ROLES)
def test_api_conforms_and_never_fails(role, api):
    world, base_url = api
    user = world.users()[role]
    schema = _load(base_url, _token(user))
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @_settings(max_examples=MAX_EXAMPLES, phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate])
        @hypothesis.given(case=operation.as_strategy())
        def run(case):
            if case.operation.definition.raw.get("operationId") == REVOKE:
                case.headers["Authorization"] = _token(user)
            case.call_and_validate(base_url=base_url, checks=CHECKS, excluded_checks=EXCLUDED)

        try:
            run()
        except (Exception, BaseExceptionGroup) as exc:  # collect every failure, then report them all
            failures.append(f"{operation.method.upper()} {operation.path}: {str(exc)[:1500]}")
    assert operations > 10
    assert not failures, f"{len(failures)} operation(s) failed as {role}:\n" + "\n\n".join(failures)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ROLES)
def test_api_scenarios_follow_links_and_never_fail(role, api):
    world, base_url = api
    schema = _load(base_url, _token(world.users()[role])).exclude(operation_id=REVOKE)
    links = sum(len(response.get("links", {})) for item in schema.raw_schema["paths"].values()
                for operation in item.values() if isinstance(operation, dict)
                for response in operation.get("responses", {}).values())
    assert links > 100  # the schema carries the links the scenarios follow
    calls: list[str] = []  # every call of every scenario

    class Scenarios(schema.as_state_machine()):
        def get_call_kwargs(self, case):
            return {"base_url": base_url}

        def after_call(self, response, case):
            super().after_call(response, case)
            calls.append(case.operation.label)

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS, additional_checks=additional_checks,
                                   excluded_checks=EXCLUDED, transport_kwargs=kwargs,
                                   recorder=self.recorder)

    Scenarios.run(settings=_settings(max_examples=SCENARIOS, stateful_step_count=STEPS, phases=[hypothesis.Phase.generate]))
    assert len(calls) > SCENARIOS and len(set(calls)) > 5, calls  # scenarios followed links past their first call
