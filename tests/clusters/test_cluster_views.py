"""Clusters and blueprints through the generic page and API cases (tests/viewtests.py)."""
import itertools

import pytest

from clusters.blueprints import catalog
from clusters.choices import ClusterState
from clusters.models import Blueprint, Cluster
from tests import viewtests
from tests.clusters.factories_clusters import ready_cluster

pytestmark = pytest.mark.usefixtures("quotas")
_names = itertools.count()


class ClusterCase(viewtests.ModelCase):
    model = Cluster
    writer = "lead_a"
    read_only = ("customer_a", "pm")
    url_names = {"list": "clusters:cluster_list", "detail": "clusters:cluster_detail",
                 "delete": "clusters:cluster_delete"}
    api_basename = "clusters-api:cluster"
    api_methods = ("post", "delete")
    api_create_status = api_delete_status = 202  # the launch and the delete run in the background
    api_foreign_create_status = 403
    flat_sizes = (2, 8)

    def make(self, world, **fields):
        return ready_cluster(world.org_a, name=f"c{next(_names)}", **fields)

    def make_foreign(self, world, **fields):
        return ready_cluster(world.org_b, name=f"c{next(_names)}", **fields)

    def delete_data(self, obj):
        return {"confirm_name": obj.name}

    def deleted(self, obj):
        obj.refresh_from_db()
        return obj.state == ClusterState.DELETING

    api_deleted = deleted

    def api_data(self, world):
        return {"organization": world.org_a.slug, "name": "trn-run", "blueprint": "hyperpod", "full_stack": True,
                "parameters": {"network": {"AvailabilityZone": "ap-northeast-1a"},
                               "storage": {"CreateHomeFileSystem": "true"},
                               "cluster": {"WorkerInstanceType": "ml.trn1.32xlarge", "WorkerCount": "4"}}}

    def api_invalid_data(self, world):
        return {**self.api_data(world), "name": "Not A Slug"}


class TestClusterPages(ClusterCase, viewtests.ListTests, viewtests.CsvTests, viewtests.DetailTests,
                       viewtests.DeleteTests):
    max_queries = 8


class TestClusterApi(ClusterCase, viewtests.ApiListTests, viewtests.ApiCreateTests, viewtests.ApiDeleteTests):
    flat_roles = ("lead_a",)
    max_queries = 7

    def api_delete_url(self, obj):
        return f"{self.api_url(obj)}?confirm={obj.name}"


class BlueprintCase(viewtests.ModelCase):
    """Blueprints are the program's catalog: every member reads them, nobody writes them here."""

    model = Blueprint
    lookup = "slug"
    url_names = {"list": "clusters:blueprint_list", "detail": "clusters:blueprint_detail"}
    read_only = ("customer_a", "pm")
    foreign = ()

    def make(self, world, **fields):
        return catalog.sync()["parallelcluster"]


class TestBlueprintPages(BlueprintCase, viewtests.DetailTests):
    pass
