"""The reservation cross-check: what AWS says of each reservation in force (through the organization's role, from
the embedded endpoint) against what the portal counts held; flagged where AWS sees fewer instances in use."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse

from clusters.accounting import reservation_checks, tasks
from clusters.accounting.models import ReservationCheck
from clusters.choices import ClusterState
from portal.core import aws as portal_aws
from sandbox.aws import moto_ec2, moto_training_plans
from tests.clusters.factories_clusters import ClusterFactory
from tests.workloads.factories_workloads import CapacityReservationFactory

pytestmark = pytest.mark.django_db
REGION = "ap-northeast-1"


class _Throttling(BaseHTTPRequestHandler):
    """An EC2 endpoint that answers every call RequestLimitExceeded, as EC2 throttles."""

    calls = 0

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).calls += 1
        data = (b"<?xml version='1.0' encoding='UTF-8'?><Response><Errors><Error><Code>RequestLimitExceeded</Code>"
                b"<Message>Request limit exceeded.</Message></Error></Errors><RequestID>r</RequestID></Response>")
        self.send_response(503)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def throttling_ec2(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Throttling)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.AWS_ENDPOINT_URL = f"http://127.0.0.1:{server.server_address[1]}"
    portal_aws.clear_credentials()
    _Throttling.calls = 0
    yield _Throttling
    server.shutdown()
    portal_aws.clear_credentials()


def odcr(aws, org, count: int) -> str:
    """An ODCR made in the organization's account (through its role, as the portal acts)."""
    ec2 = portal_aws.client("ec2", organization=org, region=REGION)
    return ec2.create_capacity_reservation(InstanceType="p5.48xlarge", InstancePlatform="Linux/UNIX",
                                           AvailabilityZone=f"{REGION}a", InstanceCount=count
                                           )["CapacityReservation"]["CapacityReservationId"]


def cluster_on(org, reservation_id: str, nodes: int, *, parameter: str = "CapacityReservationId", **kwargs):
    return ClusterFactory(organization=org, node_count=nodes, state=ClusterState.READY,
                          parameters={"cluster": {parameter: reservation_id}}, **kwargs)


def test_a_reservation_aws_reports_unused_while_held_is_flagged(aws, world):
    org = world.org_a
    used_id, unused_id = odcr(aws, org, 8), odcr(aws, org, 4)
    moto_ec2.set_reservation_usage(org.aws_account_id, REGION, used_id, 8)
    used = CapacityReservationFactory(organization=org, reservation_id=used_id, count=8)
    unused = CapacityReservationFactory(organization=org, reservation_id=unused_id, count=4)
    cluster_on(org, used_id, 8)
    cluster_on(org, unused_id, 4)
    ClusterFactory(organization=org, node_count=4, state=ClusterState.DELETED,
                   parameters={"cluster": {"CapacityReservationId": used_id}})  # gone: not held

    assert len(reservation_checks.check_organization(org.pk)) == 2

    checks = {c.reservation_id: c for c in ReservationCheck.objects.all()}
    assert (checks[used.pk].aws_total, checks[used.pk].aws_in_use, checks[used.pk].portal_held,
            checks[used.pk].flagged, checks[used.pk].aws_state) == (8, 8, 8, False, "active")
    assert (checks[unused.pk].aws_total, checks[unused.pk].aws_in_use, checks[unused.pk].portal_held,
            checks[unused.pk].flagged) == (4, 0, 4, True)

    # AWS sees it used now: the next check clears the flag.
    moto_ec2.set_reservation_usage(org.aws_account_id, REGION, unused_id, 4)
    reservation_checks.check_organization(org.pk)
    assert not ReservationCheck.objects.get(reservation=unused).flagged


def test_a_training_plan_is_asked_of_sagemaker(aws, world):
    org = world.org_a
    arn = moto_training_plans.add_training_plan(org.aws_account_id, REGION, name="plan-a", instance_type="ml.trn1.32xlarge",
                                                count=16, in_use=0)
    plan = CapacityReservationFactory(organization=org, reservation_id=arn, kind="training_plan",
                                      instance_type_name="trn1.32xlarge", count=16)
    cluster_on(org, arn, 16, parameter="TrainingPlanArn", instance_type="trn1.32xlarge")
    reservation_checks.check_organization(org.pk)
    check = ReservationCheck.objects.get(reservation=plan)
    assert (check.aws_state, check.aws_total, check.aws_in_use, check.portal_held, check.flagged) == (
        "Active", 16, 0, 16, True)
    moto_training_plans.set_training_plan_usage(org.aws_account_id, REGION, "plan-a", 16)
    reservation_checks.check_organization(org.pk)
    check.refresh_from_db()
    assert (check.aws_in_use, check.flagged) == (16, False)


def test_an_unknown_reservation_is_recorded_as_failed_and_the_others_still_checked(aws, world):
    org = world.org_a
    known = odcr(aws, org, 2)
    missing = CapacityReservationFactory(organization=org, reservation_id="cr-00000000000000bad")
    fine = CapacityReservationFactory(organization=org, reservation_id=known, count=2)
    reservation_checks.check_organization(org.pk)
    failed = ReservationCheck.objects.get(reservation=missing)
    assert (failed.status, failed.failure_reason, failed.flagged) == ("failed", "not_found", False)
    assert "does not exist" in failed.error
    assert ReservationCheck.objects.get(reservation=fine).status == "ok"


def test_throttling_is_retried_by_the_task_and_recorded_on_the_last_try(throttling_ec2, world, settings):
    org = world.org_a
    org.role_arn = ""  # the stand-in endpoint has no STS: the calls use the portal's own keys
    org.save(update_fields=["role_arn"])
    settings.AWS_MAX_ATTEMPTS = 1  # botocore retries once: two calls per try
    reservation = CapacityReservationFactory(organization=org)
    ReservationCheck.objects.create(reservation=reservation, organization=org, checked_at=reservation.created,
                                    status="ok", aws_total=8, aws_in_use=8, portal_held=8)
    result = tasks.check_reservations_task.apply(args=[org.pk])
    assert result.result == 0
    assert throttling_ec2.calls == 2 * (tasks.CHECK_RETRIES + 1)
    check = ReservationCheck.objects.get(reservation=reservation)
    # Recorded on the last try only, in the portal's words; the last good figures stay.
    assert (check.status, check.failure_reason, check.aws_in_use) == ("failed", "throttling", 8)


def test_the_flag_shows_on_the_organization_page_and_the_api_to_its_members_only(aws, world, client):
    org = world.org_a
    unused_id = odcr(aws, org, 4)
    CapacityReservationFactory(organization=org, reservation_id=unused_id, count=4)
    cluster_on(org, unused_id, 4)
    reservation_checks.check_organization(org.pk)
    client.force_login(world.customer_a)
    page = client.get(reverse("portal:organization_detail", args=[org.slug])).content.decode()
    assert "AWS reports 0 of 4 instances in use" in page and unused_id in page
    assert "Idle under 10 % of healthy accelerators busy for 24 h" in page  # the share as a percentage, not 0.10
    api = client.get(reverse("accounting-api:reservationcheck-list")).json()
    rows = api["results"] if isinstance(api, dict) else api
    assert [(r["reservation_id"], r["flagged"], r["aws_in_use"], r["portal_held"]) for r in rows] == [
        (unused_id, True, 0, 4)]
    client.force_login(world.customer_b)
    api = client.get(reverse("accounting-api:reservationcheck-list")).json()
    assert (api["results"] if isinstance(api, dict) else api) == []


def test_the_flag_shows_in_the_weekly_review_its_csv_and_api(aws, world, client):
    org = world.org_a
    unused_id = odcr(aws, org, 4)
    CapacityReservationFactory(organization=org, reservation_id=unused_id, count=4)
    cluster_on(org, unused_id, 4)
    reservation_checks.check_organization(org.pk)
    client.force_login(world.pm)
    page = client.get(reverse("review:overview"))
    assert "AWS reports 0 of 4 instances in use; the portal counts 4 held" in page.content.decode()
    rows = {o["id"]: o for o in page.context["figures"]["organizations"]}
    assert (rows[org.pk]["reservations_flagged"], rows[world.org_b.pk]["reservations_flagged"]) == (1, 0)
