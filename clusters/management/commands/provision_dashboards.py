"""Put the repository's Grafana dashboards into an observability stack's Grafana workspace."""
from django.core.management.base import BaseCommand, CommandError

from clusters.health.alerts import grafana as grafana_provision
from clusters.models import Cluster
from portal.core import aws


class Command(BaseCommand):
    help = "Provision the GPU health, EFA and node dashboards: provision_dashboards <observability cluster id>."

    def add_arguments(self, parser):
        parser.add_argument("cluster_id", type=int)

    def handle(self, *args, cluster_id: int, **options):
        cluster = Cluster.objects.select_related("organization").filter(pk=cluster_id).first()
        if cluster is None:
            raise CommandError(f"Cluster {cluster_id} has no ready observability stack (GrafanaWorkspaceId).")
        try:
            done = grafana_provision.provision_cluster(cluster)
        except (grafana_provision.ProvisionError, aws.AwsError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"data source {done.datasource}; dashboards {', '.join(done.dashboards)}")
