"""Raw provider text (AWS errors, AWS Support sync errors, job logs) reaches lead SAs and staff only;
customers read what failed and what to do, in the portal's words."""
from __future__ import annotations

import pytest
from django.urls import reverse

from clusters.choices import ClusterState
from portal.core import provider_errors
from portal.core.models import TimelineEntry
from tests.clusters.factories_clusters import ready_cluster
from tests.interactions.factories_interactions import InteractionFactory

# What botocore gives for a refused AssumeRole (the shape AWS answers; the ARNs are the secrets).
ACCESS_DENIED = ("AccessDenied: User: arn:aws:iam::999988887777:user/geniac-portal is not authorized to perform: "
                 "sts:AssumeRole on resource: arn:aws:iam::111122223333:role/GeniacPortalAccess")
RAW_SUPPORT = "<html><body><h1>500 Internal Server Error</h1>upstream support-proxy.internal:8443</body></html>"


@pytest.fixture
def failed_cluster(world):
    cluster = ready_cluster(world.org_a, name="alpha-fail")
    cluster.state = ClusterState.CREATING
    cluster.save(update_fields=["state"])
    cluster.transition(ClusterState.FAILED, error=ACCESS_DENIED, reason="access_denied")
    job = cluster.jobs.first()
    job.error, job.log = ACCESS_DENIED, "calling AssumeRole\n" + ACCESS_DENIED
    job.save(update_fields=["error", "log"])
    return cluster


def _customer_sees(client, world, cluster):
    client.force_login(world.customer_a)
    pages = [
        client.get(cluster.get_absolute_url()).content.decode(),
        client.get(reverse("clusters:cluster_progress", args=[cluster.pk])).content.decode(),
        client.get(reverse("clusters:launch_day")).content.decode(),
        b"".join(client.get(reverse("clusters:cluster_list"), {"export": "csv"}).streaming_content).decode(),
        client.get(world.org_a.get_absolute_url()).content.decode(),
        client.get(reverse("portal:timeline", args=[world.org_a.slug])).content.decode(),
        client.get(reverse("clusters-api:cluster-detail", args=[cluster.pk])).content.decode(),
        client.get(reverse("clusters-api:launchjob-list")).content.decode(),
    ]
    return pages


def test_customers_never_read_aws_error_text(client, world, failed_cluster):
    for i, page in enumerate(_customer_sees(client, world, failed_cluster)):
        assert "999988887777" not in page and "not authorized" not in page, (i, page[page.find("9999"):][:300])
    api = client.get(reverse("clusters-api:cluster-detail", args=[failed_cluster.pk])).json()
    assert api["error_message"] == provider_errors.CLUSTER_FAILURES["access_denied"]
    page = client.get(reverse("clusters:cluster_progress", args=[failed_cluster.pk])).content.decode()
    assert "Ask your AWS administrator to check that role" in page
    jobs = client.get(reverse("clusters-api:launchjob-list")).json()["results"]
    assert jobs and all(j["log"] == "" and j["error"] in ("", provider_errors.JOB_FAILED) for j in jobs)
    entry = TimelineEntry.objects.filter(organization=world.org_a, visibility="shared").order_by("-pk").first()
    assert "arn:aws" not in entry.body and entry.body == provider_errors.CLUSTER_FAILURES["access_denied"]


def test_customers_read_no_cloudformation_reason_through_the_api(client, world, failed_cluster):
    from clusters.models import StackEvent

    stack = failed_cluster.stacks.first()
    stack.status_reason = "Resource creation cancelled: " + ACCESS_DENIED
    stack.save(update_fields=["status_reason"])
    StackEvent.objects.create(stack=stack, event_id="e-1", timestamp=failed_cluster.updated, logical_id="HeadNode",
                              resource_type="AWS::EC2::Instance",
                              status="CREATE_FAILED", reason=ACCESS_DENIED)
    client.force_login(world.customer_a)
    api = client.get(reverse("clusters-api:cluster-detail", args=[failed_cluster.pk])).json()
    assert {s["status_reason"] for s in api["stacks"] if s["status_reason"]} == {provider_errors.STACK_REASON}
    events = client.get(reverse("clusters-api:stackevent-list")).json()["results"]
    assert events and all(e["reason"] == provider_errors.STACK_REASON for e in events)
    client.force_login(world.lead_a)
    events = client.get(reverse("clusters-api:stackevent-list")).json()["results"]
    assert any(ACCESS_DENIED in e["reason"] for e in events)


def test_lead_sas_read_the_raw_text(client, world, failed_cluster):
    client.force_login(world.lead_a)
    page = client.get(reverse("clusters:cluster_progress", args=[failed_cluster.pk])).content.decode()
    assert "arn:aws:iam::111122223333:role/GeniacPortalAccess" in page
    assert client.get(reverse("clusters-api:cluster-detail", args=[failed_cluster.pk])).json()["error_message"] == ACCESS_DENIED


def test_a_failed_support_sync_shows_customers_the_portals_words(client, world):
    interaction = InteractionFactory(organization=world.org_a, visibility="shared", support_case_id="case-1-x",
                                     sync_status="failed", sync_error=RAW_SUPPORT)
    client.force_login(world.customer_a)
    page = client.get(interaction.get_absolute_url()).content.decode()
    assert "support-proxy.internal" not in page and "500 Internal Server Error" not in page
    assert provider_errors.SUPPORT_SYNC_FAILED in page
    api = client.get(reverse("interactions-api:interaction-detail", args=[interaction.pk])).json()
    assert api["sync_error"] == provider_errors.SUPPORT_SYNC_FAILED
    client.force_login(world.lead_a)
    assert "support-proxy.internal" in client.get(interaction.get_absolute_url()).content.decode()


def test_connection_refused_from_the_endpoint_is_not_called_throttling(settings):
    """A real refused connection (nothing listens on the port): retryable, but unreachable, not throttling, in
    what a retried remediation step says to lead SAs and in the final reason of an action or a validation."""
    import pytest as _pytest

    from portal.core import aws, provider_errors
    from tests.faults.test_broker_down import _free_port

    settings.AWS_ENDPOINT_URL = f"http://127.0.0.1:{_free_port()}"
    settings.AWS_MAX_ATTEMPTS = 1
    with _pytest.raises(aws.AWS_EXCEPTIONS) as refused:
        aws.client("ec2").describe_instances()
    error = aws.translate(refused.value)
    assert error.retryable and error.unreachable
    assert provider_errors.aws_failure(error) == "unreachable"
    assert "could not be reached" in provider_errors.aws_retry_note(error)
    assert "slowed" not in provider_errors.remediation_failure("unreachable")
    assert "slowed" not in provider_errors.validation_failure("unreachable")
    throttled = aws.AwsError("Throttling: Rate exceeded", code="Throttling", retryable=True)
    assert provider_errors.aws_failure(throttled) == "throttling" and not throttled.unreachable
    assert "slowed" in provider_errors.aws_retry_note(throttled)
