"""Route cases of cluster health: reports, nodes, GPU faults, NCCL validation, health pushes, alerts."""
from __future__ import annotations

from tests.clusters.access_cases import LAZY_CLUSTER
from tests.routecases import (
    _UNSEEN_ORG,
    FORBIDDEN,
    LEAD,
    LEAD_WRITES,
    LIST,
    OBJECTS,
    ROLES,
    ROUTES,
    Case,
    _memo,
    _static,
    _writes,
    api_data,
)


# --- health: cluster health, GPU faults, NCCL validation --------------------------------------------
def _health_report(w):
    from clusters.health.ingest import service as services
    from tests.health.factories_health import sample

    cluster = LAZY_CLUSTER(w)
    text = sample("dcgm_p5_xid79_missing_gpu.prom").replace("ip-10-1-45-13", "ip-ZZ-ORG-A-SECRET")
    return services.ingest(cluster, text, "push").report


def _gpu_fault(w):
    from clusters.health.models import GpuFault

    _health_report_cached(w)
    return GpuFault.objects.filter(cluster__organization=w.org_a).first()


def _validation_run(w):
    from tests.health.factories_health import validation_run

    return validation_run(LAZY_CLUSTER(w), notes="ZZ-ORG-A-SECRET first run")


def _health_report_cached(w):
    return _memo(w, "report", _health_report)


OBJECTS.update(cluster=LAZY_CLUSTER, health_report=_health_report_cached, gpu_fault=_gpu_fault,
               validation_run=_validation_run,
               node_health=lambda w: _health_report_cached(w).nodes.order_by("-rank").first())
_CL = lambda o: {"pk": o["cluster"].pk}  # noqa: E731
_HEALTH = {
    "health:program_health": Case(foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_b": LIST}),
    "health:cluster_health": Case(kwargs=_CL),
    "health:cluster_health_settings": Case(kwargs=_CL, expect=LEAD_WRITES),
    "health:rotate_token": Case(kwargs=_CL, expect=LEAD_WRITES),
    "health:validationrun_add": Case(kwargs=_CL, expect={"pm": FORBIDDEN}),
    "health:validationrun_detail": Case(kwargs=lambda o: {"pk": o["validation_run"].pk}),
    # POST-only (lead SAs of the fault's organization); GET is 405 for everyone.
    "health:gpufault_link": Case(kwargs=lambda o: {"pk": o["gpu_fault"].pk}),
    "health-api:api-root": Case(api=True, foreign=LIST),
    "health-api:healthreport-list": Case(api=True, foreign=LIST),
    "health-api:healthreport-detail": Case(api=True, kwargs=lambda o: {"pk": o["health_report"].pk}),
    "health-api:nodehealth-list": Case(api=True, foreign=LIST),
    "health-api:nodehealth-detail": Case(api=True, kwargs=lambda o: {"pk": o["node_health"].pk}),
    "health-api:gpufault-list": Case(api=True, foreign=LIST),
    "health-api:gpufault-detail": Case(api=True, kwargs=lambda o: {"pk": o["gpu_fault"].pk}),
    "health-api:validationrun-list": Case(api=True, foreign=LIST),
    "health-api:validationrun-detail": Case(api=True, kwargs=lambda o: {"pk": o["validation_run"].pk}),
    # Authenticated by a cluster token, not by a user: every user gets 401 on it.
    "health-api:ingest": Case(api=True, kwargs=lambda o: {"cluster_id": o["cluster"].pk}, foreign=(401, 403)),
    "health-api:rotate-token": Case(api=True, kwargs=lambda o: {"cluster_id": o["cluster"].pk}),
    # Amazon SNS posts here with no portal credential; only a signed SNS message is accepted (POST only):
    # any user's request is not one (403: no signature), and GET is not served.
    "health-api:alerts-sns": Case(api=True, public=True, expect={r: 405 for r in ROLES},
                                  payload=lambda o: {"Type": "Notification"}, refused={r: 403 for r in ROLES}),
}
ROUTES.update(_HEALTH)
# health pushes (the push job): listed for users through the policy; the status route is for the cluster token only.
OBJECTS.update(health_push=lambda w: __import__("clusters.health.models", fromlist=["HealthPush"]).HealthPush.objects.create(
    cluster=_health_report_cached(w).cluster, status="failed", error="ZZ-ORG-A-SECRET reason"))
ROUTES.update({
    "health-api:healthpush-list": Case(api=True, foreign=LIST),
    "health-api:healthpush-detail": Case(api=True, kwargs=lambda o: {"pk": o["health_push"].pk}),
    "health-api:push-status": Case(api=True, kwargs=lambda o: {"cluster_id": o["health_push"].cluster_id,
                                                               "push_id": o["health_push"].pk}, foreign=401,
                                 # the cluster's token only: a signed-in user of any role is not it
                                 expect={r: 401 for r in ROLES}),
})

# health
_writes("health:cluster_health_settings", _static({"pull_enabled": "", "auth_kind": "none", "aws_region": ""}), LEAD)
_writes("health:rotate_token", _static({}), LEAD)
_writes("health:validationrun_add", lambda o: {"text": _nccl_text(), "nodes": 2}, {"customer_a", "lead_a", "staff"})
_writes("health:gpufault_link", lambda o: {"interaction": o["interaction"].pk}, LEAD)
_writes("health-api:gpufault-detail", api_data("health-api:gpufault-detail", "gpu_fault"), LEAD, success=200)
# Program managers read runs but do not upload them: the cluster is not among their choices (400).
_writes("health-api:validationrun-list", lambda o: {"cluster": o["cluster"].pk, "text": _nccl_text(), "nodes": 2},
        {"customer_a", "lead_a", "staff"}, refused={**_UNSEEN_ORG, "pm": 400})
_writes("health-api:validationrun-detail", api_data("health-api:validationrun-detail", "validation_run",
                                                    notes="changed"), {"customer_a", "lead_a", "staff"})
# Cluster-token endpoints: no user holds the right.
_writes("health-api:ingest", _static({}), (), refused={r: 401 for r in ROLES})
_writes("health-api:rotate-token", _static({}), LEAD, success=201)


def _nccl_text() -> str:
    from tests.health.factories_health import sample

    return sample("nccl_allreduce_2xp5_efa_srun.txt")


# NCCL validation started from the portal: the cluster's panel and start form, a job's page, the API (start, list,
# detail), the bandwidth trend, and the route a running job posts its outputs to with its own token.
def _validation_job(w):
    from clusters.health.models import ValidationJob

    return ValidationJob.objects.create(cluster=LAZY_CLUSTER(w), key="access-case", expected=["all_reduce"],
                                        collectives=["all_reduce"], upload_base="http://portal.invalid",
                                        state="done", verdict="pass", summary="ZZ-ORG-A-SECRET summary")


OBJECTS["validation_job"] = lambda w: _memo(w, "validation_job", _validation_job)
_VJ = lambda o: {"pk": o["validation_job"].pk}  # noqa: E731
ROUTES.update({
    "health:validationjob_panel": Case(kwargs=_CL),
    "health:validationjob_add": Case(kwargs=_CL),
    "health:validationjob_detail": Case(kwargs=_VJ),
    "health-api:validationjob-list": Case(api=True, foreign=LIST),
    "health-api:validationjob-detail": Case(api=True, kwargs=_VJ),
    "health-api:validation-trend": Case(api=True, kwargs=lambda o: {"cluster_id": o["cluster"].pk}),
    # Authenticated by the job's own upload token, not by a user: every user gets 401 on it.
    "health-api:validation-output": Case(api=True, kwargs=_VJ, foreign=401, expect={r: 401 for r in ROLES}),
})
_STARTERS = {"customer_a", "lead_a", "staff"}
_writes("health:validationjob_add", _static({"collectives": ["all_reduce"]}), _STARTERS)
_writes("health-api:validationjob-list", lambda o: {"cluster": o["cluster"].pk, "collectives": ["all_reduce"]},
        _STARTERS, success=201, refused={**_UNSEEN_ORG, "pm": 400})
_writes("health-api:validation-output", _static({}), (), refused={r: 401 for r in ROLES})


# Cancelling a running validation: the job is on a second ready cluster of organization A, so the start routes above
# still find no open job on theirs.
def _open_validation_job(w):
    from clusters.health.models import ValidationJob
    from tests.clusters.factories_clusters import ready_cluster

    cluster = ready_cluster(w.org_a, name="alpha-p5-cancel")
    return ValidationJob.objects.create(cluster=cluster, key="access-case-open", expected=["all_reduce"],
                                        collectives=["all_reduce"], upload_base="http://portal.invalid",
                                        state="submitted", summary="ZZ-ORG-A-SECRET running")


OBJECTS["open_validation_job"] = lambda w: _memo(w, "open_validation_job", _open_validation_job)
_OVJ = lambda o: {"pk": o["open_validation_job"].pk}  # noqa: E731
ROUTES.update({
    "health:validationjob_cancel": Case(kwargs=_OVJ),
    "health-api:validationjob-cancel": Case(api=True, kwargs=_OVJ),
})
_writes("health:validationjob_cancel", _static({}), _STARTERS, kwargs=_OVJ)
_writes("health-api:validationjob-cancel", _static({}), _STARTERS, success=200)


# The controller agent's routes (HyperPod Slurm): authenticated by the cluster's ingestion token, never by a user, so
# every signed-in user of any role or organization gets 401 and nothing is claimed or answered.
def _agent_work_item(w):
    from clusters.health.models import AgentWorkItem

    return AgentWorkItem.objects.create(cluster=LAZY_CLUSTER(w), kind="nodes", payload={},
                                        comment="ZZ-ORG-A-SECRET listing")


OBJECTS["agent_work_item"] = lambda w: _memo(w, "agent_work_item", _agent_work_item)
ROUTES.update({
    "health-api:agent-poll": Case(api=True, kwargs=lambda o: {"cluster_id": o["cluster"].pk}, foreign=401,
                                  expect={r: 401 for r in ROLES}),
    "health-api:agent-result": Case(api=True, kwargs=lambda o: {"cluster_id": o["agent_work_item"].cluster_id,
                                                                "item_id": o["agent_work_item"].pk},
                                    foreign=401, expect={r: 401 for r in ROLES}),
})
_writes("health-api:agent-poll", _static({"wait": 0}), (), refused={r: 401 for r in ROLES})
_writes("health-api:agent-result", _static({"exit_status": 0, "stdout": "x"}), (), refused={r: 401 for r in ROLES})
