"""Print a cluster's generated ParallelCluster configuration (YAML)."""
from django.core.management.base import BaseCommand, CommandError

from clusters.blueprints import pcluster_config
from clusters.models import Cluster


class Command(BaseCommand):
    help = "Print the ParallelCluster 3 configuration generated for a cluster: cluster_config <cluster id>."

    def add_arguments(self, parser):
        parser.add_argument("cluster_id", type=int)

    def handle(self, *args, cluster_id: int, **options):
        cluster = Cluster.objects.select_related("organization", "blueprint").filter(pk=cluster_id).first()
        if cluster is None:
            raise CommandError(f"No cluster with id {cluster_id}.")
        text = pcluster_config.for_cluster(cluster)
        if text is None:
            raise CommandError(f"Cluster {cluster} is not a ParallelCluster cluster "
                               f"({cluster.blueprint.slug if cluster.blueprint else 'no blueprint'}).")
        self.stdout.write(text, ending="")
