"""Route cases of the clusters app: the blueprint catalog, launches, a cluster's pages and API."""
from __future__ import annotations

from tests.routecases import (
    FORBIDDEN,
    LEAD,
    LEAD_ADDS,
    LEAD_WRITES,
    LIST,
    OBJECTS,
    OUTSIDERS,
    ROUTES,
    Case,
    _memo,
    _static,
    _writes,
)


# --- clusters: the launch pipeline. The one cluster of organization A every route uses.
def _cluster(w):
    from tests.clusters.factories_clusters import ready_cluster

    return ready_cluster(w.org_a, name="alpha-p5", error_message="ZZ-ORG-A-SECRET")


def LAZY_CLUSTER(w):  # noqa: N802
    return _memo(w, "cluster", _cluster)


def _blueprint(w):
    from clusters.blueprints import catalog

    return catalog.sync()["parallelcluster"]


def _launch_job(w):
    return LAZY_CLUSTER(w).jobs.first()


def _stack_event(w):
    from tests.clusters.factories_clusters import StackEventFactory

    return StackEventFactory(stack=LAZY_CLUSTER(w).stacks.first(), reason="ZZ-ORG-A-SECRET")


# One cluster of organization A per world (LAZY_CLUSTER memoizes _cluster) for health and launch routes.
OBJECTS.update({"cluster": LAZY_CLUSTER, "blueprint": _blueprint, "launch_job": _launch_job, "stack_event": _stack_event})
_cluster_pk = lambda o: {"pk": o["cluster"].pk}  # noqa: E731
ROUTES.update({
    "clusters:cluster_list": Case(foreign=LIST),
    "clusters:launch_day": Case(foreign=LIST),
    "clusters:blueprint_list": Case(foreign=LIST),
    # The catalog is read by whoever holds a role in some organization; a specialist holds none.
    "clusters:blueprint_detail": Case(kwargs=lambda o: {"slug": o["blueprint"].slug}, foreign=LIST,
                                      expect={"specialist": 404}),
    "clusters:launch": Case(kwargs=lambda o: {"slug": o["blueprint"].slug}, foreign=FORBIDDEN,
                            expect={**LEAD_ADDS, "specialist": 404}),
    "clusters:cluster_detail": Case(kwargs=_cluster_pk),
    "clusters:cluster_progress": Case(kwargs=_cluster_pk),
    "clusters:cluster_config": Case(kwargs=_cluster_pk),
    "clusters:cluster_retry": Case(kwargs=_cluster_pk),
    "clusters:cluster_delete": Case(kwargs=_cluster_pk, expect=LEAD_WRITES),
    "clusters-api:api-root": Case(api=True, foreign=LIST),
    "clusters-api:blueprint-list": Case(api=True, foreign=LIST),
    "clusters-api:blueprint-detail": Case(api=True, kwargs=lambda o: {"slug": o["blueprint"].slug}, foreign=LIST,
                                          expect={"specialist": 404}),
    "clusters-api:cluster-list": Case(api=True, foreign=LIST),
    "clusters-api:cluster-detail": Case(api=True, kwargs=_cluster_pk),
    "clusters-api:cluster-retry": Case(api=True, kwargs=_cluster_pk),
    "clusters-api:cluster-pcluster-config": Case(api=True, kwargs=_cluster_pk),
    "clusters-api:launchjob-list": Case(api=True, foreign=LIST),
    "clusters-api:launchjob-detail": Case(api=True, kwargs=lambda o: {"pk": o["launch_job"].pk}),
    "clusters-api:stackevent-list": Case(api=True, foreign=LIST),
    "clusters-api:stackevent-detail": Case(api=True, kwargs=lambda o: {"pk": o["stack_event"].pk}),
})



# clusters
_writes("clusters:cluster_delete", lambda o: {"confirm_name": o["cluster"].name}, LEAD)
_writes("clusters:cluster_retry", _static({}), LEAD, kwargs=lambda o: {"pk": o["failed_cluster"].pk})
# The preview: the whole form, checked and shown back; nothing is launched.
_writes("clusters:launch", lambda o: {**_launch_form(o), "preview": "1"}, {"lead_a", "staff"}, success=200,
        writes_rows=False, refused={"lead_b": 400})
_writes("clusters-api:cluster-list", lambda o: _launch_api(o), LEAD, refused={r: 403 for r in OUTSIDERS},
        success=202)
_writes("clusters-api:cluster-detail", lambda o: {"confirm": o["cluster"].name}, LEAD, success=202)
_writes("clusters-api:cluster-retry", _static({}), LEAD, kwargs=lambda o: {"pk": o["failed_cluster"].pk},
        success=202)


def _failed_cluster(w):
    from tests.clusters.factories_clusters import launched_cluster

    return launched_cluster(w.org_a, name="alpha-retry", state="failed", error_message="ZZ-ORG-A-SECRET failed")


OBJECTS["failed_cluster"] = _failed_cluster
_LAUNCH = {"network": {"AvailabilityZone": "ap-northeast-1a"},
           "storage": {"LustreStorageCapacity": "2400", "LustreThroughputPerTiB": "250",
                       "CreateHomeFileSystem": "true", "HomeStorageCapacity": "512", "HomeThroughputCapacity": "64"},
           "cluster": {"ComputeInstanceType": "p5.48xlarge", "ComputeMinCount": "0", "ComputeMaxCount": "2",
                       "CapacityType": "ONDEMAND", "Os": "alinux2023", "HeadNodeInstanceType": "m5.8xlarge",
                       "QueueName": "compute"}}


def _launch_form(objs) -> dict:
    """The launch form for a two-node cluster of organization A, as the browser posts it."""
    fields = {f"{role}__{name}": value for role, values in _LAUNCH.items() for name, value in values.items()}
    return {"organization": objs["organization"].pk, "name": "beta-p5", "region": "ap-northeast-1",
            "full_stack": "on", **fields}


def _launch_api(objs) -> dict:
    return {"organization": objs["organization"].slug, "name": "beta-p5", "blueprint": "parallelcluster",
            "region": "ap-northeast-1", "full_stack": True, "parameters": _LAUNCH}
