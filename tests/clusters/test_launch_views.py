"""The launch form and its preview, the cluster pages, retry and delete, the launch-day board."""
from __future__ import annotations

import pytest
from django.urls import reverse

from clusters.choices import ClusterJobKind, ClusterState
from clusters.models import Cluster, LaunchJob
from tests.clusters.factories_clusters import ClusterFactory, launched_cluster, ready_cluster
from tests.queries import assert_flat_queries
from workloads.models import InstanceQuota

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quotas")]
LAUNCH = reverse("clusters:launch", kwargs={"slug": "parallelcluster"})


def _form(org, **overrides):
    data = {"organization": org.pk, "name": "p5-train", "region": "ap-northeast-1", "full_stack": "on",
            "network__AvailabilityZone": "ap-northeast-1a", "storage__LustreStorageCapacity": "2400",
            "storage__LustreThroughputPerTiB": "250", "storage__CreateHomeFileSystem": "true",
            "storage__HomeStorageCapacity": "512", "storage__HomeThroughputCapacity": "64",
            "cluster__ComputeInstanceType": "p5.48xlarge", "cluster__ComputeMinCount": "0",
            "cluster__ComputeMaxCount": "4", "cluster__CapacityType": "ONDEMAND", "cluster__Os": "alinux2023",
            "cluster__HeadNodeInstanceType": "m5.8xlarge", "cluster__QueueName": "compute"}
    data.update(overrides)
    return data


def test_form_is_generated_from_the_template_parameters(client, world):
    client.force_login(world.lead_a)
    html = client.get(LAUNCH).content.decode()
    assert 'name="cluster__ComputeMaxCount"' in html and 'min="1"' in html and 'max="1000"' in html
    assert '<option value="trn1.32xlarge">' in html  # allowed values become a select
    assert 'name="cluster__LustreFileSystemId"' not in html  # wired from the storage stack's outputs
    assert 'name="network__AvailabilityZone"' in html


def test_no_quota_for_the_region_refuses_the_launch(client, world):
    client.force_login(world.lead_a)
    response = client.post(LAUNCH, _form(world.org_a, region="us-west-2", network__AvailabilityZone="us-west-2a"))
    assert response.status_code == 400
    assert "only 0 of the organization" in str(response.context["form"].errors["cluster__ComputeMaxCount"])
    assert not Cluster.objects.exists()


def test_launch_creates_a_scheduled_cluster_its_stacks_and_a_job(client, world, django_capture_on_commit_callbacks):
    client.force_login(world.lead_a)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(LAUNCH, _form(world.org_a))
    cluster = Cluster.objects.get(name="p5-train")
    assert response.status_code == 302 and response["Location"] == cluster.get_absolute_url()
    assert cluster.state == ClusterState.SCHEDULED
    assert (cluster.instance_type, cluster.node_count, cluster.full_stack) == ("p5.48xlarge", 4, True)
    assert list(cluster.stacks.values_list("role", flat=True)) == ["network", "storage", "cluster"]
    assert cluster.parameters["cluster"]["ClusterName"] == "p5-train"
    job = cluster.jobs.get()
    assert job.kind == ClusterJobKind.LAUNCH and job.requested_by == world.lead_a and job.dispatched


@pytest.mark.parametrize("field,value,message", [
    ("cluster__ComputeMaxCount", "abc", "Enter a whole number."),
    ("cluster__ComputeMaxCount", "5000", "less than or equal to 1000"),
    ("cluster__ComputeInstanceType", "g4dn.xlarge", "Select a valid choice"),
    ("network__AvailabilityZone", "tokyo", "is not an availability zone name"),
    ("name", "Bad Name!", "Lowercase letters"),
])
def test_bad_parameters_are_field_errors_and_nothing_is_created(client, world, field, value, message):
    client.force_login(world.lead_a)
    response = client.post(LAUNCH, _form(world.org_a, **{field: value}))
    assert response.status_code == 400
    assert message in str(response.context["form"].errors.get(field))
    assert not Cluster.objects.exists() and not LaunchJob.objects.exists()


def test_a_lead_cannot_launch_for_an_organization_they_do_not_lead(client, world):
    client.force_login(world.lead_a)
    response = client.post(LAUNCH, _form(world.org_b))
    assert response.status_code == 400 and "organization" in response.context["form"].errors
    assert not Cluster.objects.exists()


def test_customers_cannot_open_the_launch_form(client, world):
    client.force_login(world.customer_a)
    assert client.get(LAUNCH).status_code == 403
    assert client.post(LAUNCH, _form(world.org_a)).status_code == 403
    assert not Cluster.objects.exists()


def test_unknown_blueprint_is_not_found(client, world):
    client.force_login(world.lead_a)
    assert client.get(reverse("clusters:launch", kwargs={"slug": "nope"})).status_code == 404


def test_preview_shows_resolved_parameters_and_the_parallelcluster_config(client, world, aws):
    client.force_login(world.lead_a)
    response = client.post(LAUNCH, _form(world.org_a, preview="1"))
    html = response.content.decode()
    assert response.status_code == 200 and not Cluster.objects.exists()
    assert "InstanceType: p5.48xlarge" in html and "MaxCount: 4" in html
    assert "&lt;network:PrivateSubnetId&gt;" in html  # filled by the network stack at launch
    assert "4 × p5.48xlarge in ap-northeast-1" in html and "16 of 16 left" in html
    assert "Change sets are computed against real AWS only" in html


def test_quota_guard_refuses_with_the_numbers(client, world, quotas):
    InstanceQuota.objects.filter(pk=quotas[0].pk).update(count=6)
    ready_cluster(world.org_a, name="existing")  # holds 2 × p5.48xlarge
    client.force_login(world.lead_a)
    response = client.post(LAUNCH, _form(world.org_a, cluster__ComputeMaxCount="5"))
    assert response.status_code == 400
    errors = str(response.context["form"].errors["cluster__ComputeMaxCount"])
    assert "5 × p5.48xlarge requested in ap-northeast-1" in errors and "only 4 of the organization&#x27;s quota of 6" in errors
    assert Cluster.objects.count() == 1
    assert client.post(LAUNCH, _form(world.org_a, cluster__ComputeMaxCount="4")).status_code == 302


def test_broker_down_saves_the_launch_as_scheduled_and_the_sweep_sends_it_later(
        client, world, unreachable_broker, django_capture_on_commit_callbacks):
    from clusters.tasks import sweep_launch_jobs

    client.force_login(world.lead_a)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(LAUNCH, _form(world.org_a), follow=True)
    cluster = Cluster.objects.get(name="p5-train")
    job = cluster.jobs.get()
    assert cluster.state == ClusterState.SCHEDULED and not job.dispatched and job.attempts == 1
    assert "saved as scheduled" in response.content.decode()
    assert sweep_launch_jobs() == 0  # still down
    unreachable_broker.restore()
    assert sweep_launch_jobs() == 1
    job.refresh_from_db()
    assert job.dispatched and job.attempts == 3


def test_cluster_page_shows_state_progress_outputs_and_actions(client, world):
    cluster = ready_cluster(world.org_a, name="shown")
    client.force_login(world.lead_a)
    html = client.get(cluster.get_absolute_url()).content.decode()
    assert "badge-ready" in html and "203.0.113.10" in html
    assert "fs-0a1b2c3d4e5f6071c.fsx.ap-northeast-1.amazonaws.com@tcp:/abcdefgh /fsx" in html
    assert reverse("clusters:cluster_delete", kwargs={"pk": cluster.pk}) in html
    assert 'hx-trigger="every 2s"' not in html  # a ready cluster is not polled


def test_customers_see_their_cluster_without_actions(client, world):
    """Deletes per role: tests/clusters/test_cluster_views.py."""
    cluster = ready_cluster(world.org_a, name="ro")
    client.force_login(world.customer_a)
    html = client.get(cluster.get_absolute_url()).content.decode()
    assert "shown" not in html and "Delete…" not in html and "badge-ready" in html


def test_progress_polls_while_busy_and_answers_286_when_finished(client, world):
    busy = launched_cluster(world.org_a, name="busy")
    done = ready_cluster(world.org_a, name="done")
    client.force_login(world.lead_a)
    headers = {"HX-Request": "true"}
    assert client.get(reverse("clusters:cluster_progress", kwargs={"pk": busy.pk}), headers=headers).status_code == 200
    assert client.get(reverse("clusters:cluster_progress", kwargs={"pk": done.pk}), headers=headers).status_code == 286


def test_delete_a_ready_cluster_asks_for_its_name(client, world):
    cluster = ready_cluster(world.org_a, name="big")
    url = reverse("clusters:cluster_delete", kwargs={"pk": cluster.pk})
    client.force_login(world.lead_a)
    assert "Type <code>big</code> to confirm" in client.get(url).content.decode()
    response = client.post(url, {"confirm_name": "wrong"})
    assert response.status_code == 400 and "confirm" in response.content.decode()
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.READY
    assert client.post(url, {"confirm_name": "big"}).status_code == 302
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.DELETING
    assert cluster.jobs.filter(kind=ClusterJobKind.DELETE).count() == 1


def test_the_delete_confirmation_says_what_the_storage_stack_keeps(client, world):
    cluster = ready_cluster(world.org_a, name="kept")  # launched with a home file system, Lustre by default
    url = reverse("clusters:cluster_delete", kwargs={"pk": cluster.pk})
    client.force_login(world.lead_a)
    page = client.get(url).content.decode()
    assert "keeps the data bucket" in page and "keeps the FSx for OpenZFS home file system" in page
    assert "<strong>deletes the FSx for Lustre scratch file system" in page  # the blueprint's default: Delete
    storage = cluster.stacks.get(role="storage")
    storage.parameters = {**storage.parameters, "LustreDeletionPolicy": "Retain"}
    storage.save()
    page = client.get(url).content.decode()
    assert "keeps the FSx for Lustre scratch file system" in page and "<strong>deletes" not in page


def test_the_launch_form_offers_the_lustre_deletion_policy(client, world):
    client.force_login(world.lead_a)
    page = client.get(LAUNCH).content.decode()
    assert "When the storage stack is deleted, the Lustre file system is" in page
    assert 'name="storage__LustreDeletionPolicy"' in page and '<option value="Retain">' in page


def test_retry_only_for_failed_clusters(client, world):
    cluster = ready_cluster(world.org_a, name="fine")
    client.force_login(world.lead_a)
    url = reverse("clusters:cluster_retry", kwargs={"pk": cluster.pk})
    response = client.post(url, follow=True)
    assert "Only a failed cluster can be retried" in response.content.decode()
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.READY and cluster.jobs.count() == 1


def test_config_download_is_the_generated_parallelcluster_yaml(client, world):
    cluster = ready_cluster(world.org_a, name="cfg")
    client.force_login(world.customer_a)
    response = client.get(reverse("clusters:cluster_config", kwargs={"pk": cluster.pk}))
    text = response.content.decode()
    assert response.status_code == 200 and response["Content-Disposition"] == 'attachment; filename="alpha-labs-cfg-pcluster.yaml"'
    assert "SubnetId: subnet-0a1b2c3d4e5f60719" in text and "FileSystemId: fs-0a1b2c3d4e5f6071c" in text


def test_launch_day_board_query_count_does_not_grow(client, world):
    """The cluster list: tests/clusters/test_cluster_views.py."""

    def grow(n):
        for _ in range(n):
            i = Cluster.objects.count()
            cluster = launched_cluster(world.org_a if i % 2 else world.org_b, name=f"c{i}")
            if i % 3 == 0:
                Cluster.objects.filter(pk=cluster.pk).update(state=ClusterState.FAILED, failure_reason="throttling",
                                                             error_message="Throttling: Rate exceeded")

    client.force_login(world.pm)
    assert_flat_queries(client, reverse("clusters:launch_day"), grow=grow, sizes=(2, 8), at_most=10)
    html = client.get(reverse("clusters:launch_day")).content.decode()
    assert "AWS throttled the requests" in html and "8 clusters" in html


def test_launch_day_board_shows_only_own_organization_to_customers(client, world):
    launched_cluster(world.org_a, name="mine")
    launched_cluster(world.org_b, name="theirs")
    client.force_login(world.customer_b)
    html = client.get(reverse("clusters:launch_day")).content.decode()
    assert "Beta Works" in html and "Alpha Labs" not in html and "1 cluster " in html


def test_organization_page_lists_its_clusters(client, world):
    ready_cluster(world.org_a, name="listed")
    client.force_login(world.customer_a)
    html = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "listed" in html and "badge-ready" in html


def test_capacity_reservations_are_offered_and_must_belong_to_the_organization(client, world):
    from tests.workloads.factories_workloads import CapacityReservationFactory

    ours = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0123456789abcdef0")
    trn = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0123456789abcdef1",
                                     instance_type_name="trn1.32xlarge")
    client.force_login(world.lead_a)
    html = client.get(LAUNCH).content.decode()
    assert f'<option value="{ours.reservation_id}">' in html
    response = client.post(LAUNCH, _form(world.org_a, cluster__CapacityReservationId=trn.reservation_id))
    assert response.status_code == 400
    assert "reserves trn1.32xlarge, not p5.48xlarge" in str(response.context["form"].errors)
    response = client.post(LAUNCH, _form(world.org_a, cluster__CapacityReservationId=ours.reservation_id))
    assert response.status_code == 302
    assert Cluster.objects.get().parameters["cluster"]["CapacityReservationId"] == ours.reservation_id


def test_launch_day_board_counts_instances_by_type_against_the_target(client, world, settings):
    from portal.core.models import Organization

    settings.LAUNCH_DAY_TARGET = "p5.48xlarge=127,trn1.32xlarge=24"
    Organization.objects.create(name="Gamma Idle", slug="gamma-idle", aws_account_id="123456789099")
    ClusterFactory(organization=world.org_a, name="a-p5", node_count=16, state=ClusterState.READY)
    ClusterFactory(organization=world.org_b, name="b-trn", instance_type="ml.trn1.32xlarge", node_count=8, state=ClusterState.READY)
    ClusterFactory(organization=world.org_b, name="b-p5", node_count=4, state=ClusterState.CREATING)
    ClusterFactory(organization=world.org_b, name="b-gone", node_count=99, state=ClusterState.DELETED)
    client.force_login(world.pm)
    response = client.get(reverse("clusters:launch_day"))
    by_type = {r["instance_type"]: r for r in response.context["by_type"]}
    assert (by_type["p5.48xlarge"]["ready"], by_type["p5.48xlarge"]["busy"], by_type["p5.48xlarge"]["target"]) == (16, 4, 127)
    assert (by_type["trn1.32xlarge"]["ready"], by_type["trn1.32xlarge"]["target"]) == (8, 24)
    html = response.content.decode()
    assert "16 of 127 instances ready" in html and "8 of 24 instances ready" in html
    assert "Gamma Idle" in html and "not launched" in html  # organizations that have not launched are listed
    client.force_login(world.customer_b)
    html = client.get(reverse("clusters:launch_day")).content.decode()
    assert "Gamma Idle" not in html and "Alpha Labs" not in html and "of 127" not in html


def test_launch_form_reads_like_a_product(client, world):
    """Human labels, the zone picked from a list, the full-stack help apart from its box."""
    client.force_login(world.lead_a)
    html = client.get(LAUNCH).content.decode()
    assert ">Compute instance type" in html and ">Maximum compute nodes" in html
    assert "(parameter ComputeInstanceType)" in html  # the template's name stays findable
    assert ">ComputeInstanceType" not in html and "(cluster)" not in html
    zone = html.split('name="network__AvailabilityZone"', 1)[1].split("</select>", 1)[0]
    assert '<optgroup label="Asia Pacific (Tokyo)">' in zone and 'value="ap-northeast-1c"' in zone
    box = html.split('class="field-checkbox"', 1)[1].split("</div>", 1)[0]
    assert 'name="full_stack"' in box and "</label>\n  <small" in box


def test_launch_errors_are_summarized_at_the_top_with_a_quota_request_link(client, world, quotas):
    client.force_login(world.lead_a)
    html = client.post(LAUNCH, _form(world.org_a, cluster__ComputeMaxCount="40", name="Bad Name")).content.decode()
    summary = html.split('id="error-summary"', 1)[1].split("</div>", 1)[0]
    assert html.index('id="error-summary"') < html.index("<fieldset")
    assert 'href="#id_name"' in summary
    # The name error stops validation before the quota check; a valid name shows the quota refusal.
    html = client.post(LAUNCH, _form(world.org_a, cluster__ComputeMaxCount="40")).content.decode()
    summary = html.split('id="error-summary"', 1)[1].split("</div>", 1)[0]
    assert "Over quota" in summary and reverse("workloads:changerequest_add") in summary
    assert 'href="#id_cluster__ComputeMaxCount"' in summary


def test_preview_is_shown_above_the_buttons(client, world, aws):
    client.force_login(world.lead_a)
    html = client.post(LAUNCH, _form(world.org_a, preview="1")).content.decode()
    assert html.index('id="preview-h"') < html.index('name="launch"')


def test_cluster_page_links_to_its_health_and_nccl_upload(client, world):
    cluster = ready_cluster(world.org_a, name="linked")
    health = reverse("health:cluster_health", kwargs={"pk": cluster.pk})
    upload = reverse("health:validationrun_add", kwargs={"pk": cluster.pk})
    client.force_login(world.lead_a)
    html = client.get(cluster.get_absolute_url()).content.decode()
    assert f'href="{health}"' in html and f'href="{upload}"' in html
    client.force_login(world.customer_a)
    html = client.get(cluster.get_absolute_url()).content.decode()
    settings_url = reverse("health:cluster_health_settings", kwargs={"pk": cluster.pk})
    assert f'href="{health}"' in html and f'href="{upload}"' in html  # customers may upload their own runs
    assert f'href="{settings_url}"' not in html  # ingestion settings are the lead SA's
    client.force_login(world.pm)
    assert f'href="{upload}"' not in client.get(cluster.get_absolute_url()).content.decode()


def test_launch_form_offers_only_the_chosen_organizations_reservations(client, world):
    from portal.core.choices import MembershipRole
    from tests.factories import MembershipFactory, OrganizationFactory
    from tests.workloads.factories_workloads import CapacityReservationFactory

    other = OrganizationFactory(name="Gamma Led Too", slug="gamma-led")
    MembershipFactory(user=world.lead_a, organization=other, role=MembershipRole.LEAD_SA)
    ours = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaa0")
    theirs = CapacityReservationFactory(organization=other, reservation_id="cr-0bbbbbbbbbbbbbbb0")
    client.force_login(world.lead_a)
    html = client.get(LAUNCH, {"organization": world.org_a.pk}).content.decode()
    assert ours.reservation_id in html and theirs.reservation_id not in html
    response = client.post(LAUNCH, _form(world.org_a, cluster__CapacityReservationId=theirs.reservation_id))
    assert response.status_code == 400 and not Cluster.objects.exists()
    assert theirs.reservation_id not in response.content.decode().split('name="cluster__CapacityReservationId"')[1]\
        .split("</select>")[0]
