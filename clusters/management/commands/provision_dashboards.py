"""Put the repository's Grafana dashboards into an observability stack's Grafana workspace."""
from django.core.management.base import BaseCommand, CommandError

from clusters.health import grafana_provision
from clusters.models import Cluster
from portal import aws


class Command(BaseCommand):
    help = "Provision the GPU health, EFA and node dashboards: provision_dashboards <observability cluster id>."

    def add_arguments(self, parser):
        parser.add_argument("cluster_id", type=int)

    def handle(self, *args, cluster_id: int, **options):
        cluster = Cluster.objects.select_related("organization").filter(pk=cluster_id).first()
        outputs = (cluster.outputs or {}) if cluster else {}
        if not outputs.get("GrafanaWorkspaceId") or not outputs.get("PrometheusEndpoint"):
            raise CommandError(f"Cluster {cluster_id} has no ready observability stack (GrafanaWorkspaceId).")
        try:
            client = aws.client("grafana", organization=cluster.organization, region=cluster.region)
            token = grafana_provision.workspace_token(client, outputs["GrafanaWorkspaceId"])
            done = grafana_provision.provision(outputs["GrafanaEndpoint"], token,
                                               prometheus_endpoint=outputs["PrometheusEndpoint"], region=cluster.region)
        except grafana_provision.ProvisionError as exc:
            raise CommandError(str(exc)) from exc
        except Exception as exc:  # botocore's errors, as the portal words them
            raise CommandError(str(aws.translate(exc))) from exc
        self.stdout.write(f"data source {done.datasource}; dashboards {', '.join(done.dashboards)}")
