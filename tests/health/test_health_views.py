"""Health reports, faults and validation runs through the generic page and API cases (tests/viewtests.py)."""
from clusters.health.ingest import service as services
from clusters.health.models import GpuFault, HealthReport, ValidationRun
from clusters.models import Cluster
from tests import viewtests
from tests.health.factories_health import ClusterFactory, GpuFaultFactory, sample, validation_run
from tests.interactions.factories_interactions import InteractionFactory

XID79 = "dcgm_p5_xid79_missing_gpu.prom"
EFA = "nccl_allreduce_2xp5_efa_srun.txt"


class ClusterRowCase(viewtests.ModelCase):
    """Rows that reach their organization through a cluster."""

    def cluster(self, org):
        return ClusterFactory(organization=org)

    def belongs_to_a(self, world, obj):
        return obj.cluster.organization_id == world.org_a.pk


class TestHealthReportApi(ClusterRowCase, viewtests.ApiTests):
    """Reports come from ingestion only: the API reads them and refuses every write."""

    model = HealthReport
    api_basename = "health-api:healthreport"
    api_methods = ()
    flat_roles = ("customer_a",)
    flat_sizes = (1, 7)
    max_queries = 5

    def make(self, world, **fields):
        return services.ingest(self.cluster(world.org_a), sample(XID79), "push").report

    def make_foreign(self, world, **fields):
        return services.ingest(self.cluster(world.org_b), sample(XID79), "push").report


class TestGpuFaultApi(ClusterRowCase, viewtests.ApiTests):
    """Faults: read by every member; lead SAs link one to a support interaction (PATCH), nothing else."""

    model = GpuFault
    factory = GpuFaultFactory
    api_basename = "health-api:gpufault"
    api_methods = ("patch",)
    flat_roles = ("customer_a",)
    flat_sizes = (1, 7)
    max_queries = 5

    def make(self, world, **fields):
        return self.factory(cluster=self.cluster(world.org_a), **fields)

    def make_foreign(self, world, **fields):
        return self.factory(cluster=self.cluster(world.org_b), **fields)

    def api_patch(self, world, obj):
        interaction = InteractionFactory(organization=world.org_a)
        return {"interaction": interaction.pk}

    def api_patched(self, obj):
        return obj.interaction_id is not None


class ValidationRunCase(ClusterRowCase):
    """Customers upload their own runs (view and change); program managers read them."""

    model = ValidationRun
    writer = "customer_a"
    read_only = ("pm",)
    url_names = {"detail": "health:validationrun_detail"}
    api_basename = "health-api:validationrun"
    api_methods = ("post",)
    flat_roles = ("customer_a",)
    flat_sizes = (1, 8)
    max_queries = 6

    def make(self, world, **fields):
        return validation_run(self.cluster(world.org_a), **fields)

    def make_foreign(self, world, **fields):
        return validation_run(self.cluster(world.org_b), **fields)

    def api_data(self, world):
        cluster = Cluster.objects.filter(organization=world.org_a).first() or self.cluster(world.org_a)
        return {"cluster": cluster.pk, "text": sample(EFA)}

    def api_invalid_data(self, world):
        return {**self.api_data(world), "text": "garbage"}


class TestValidationRunPages(ValidationRunCase, viewtests.DetailTests):
    read_only = ("lead_a", "pm")


class TestValidationRunApi(ValidationRunCase, viewtests.ApiTests):
    api_read_only_create_status = 400  # a program manager is offered no cluster to upload for
