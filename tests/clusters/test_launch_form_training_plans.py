"""The HyperPod launch form offers the organization's SageMaker training plans as the ParallelCluster form offers
its capacity reservations and blocks: listed once the organization is chosen, reloaded with htmx when the
organization, region or instance type changes, and wired into the launch (Sakura's plan in the demo)."""
from __future__ import annotations

import pytest
from django.urls import reverse

from clusters.forms import LaunchForm
from tests.workloads.factories_workloads import CapacityReservationFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quotas")]
HYPERPOD = reverse("clusters:launch", kwargs={"slug": "hyperpod"})
FIELD = "cluster__TrainingPlanArn"
PLAN = "arn:aws:sagemaker:ap-northeast-1:111111111111:training-plan/alpha-trn1-cycle2"


@pytest.fixture
def plan(world):
    return CapacityReservationFactory(organization=world.org_a, reservation_id=PLAN, kind="training_plan",
                                      instance_type_name="trn1.32xlarge", count=16, availability_zone="ap-northeast-1c")


def _choices(form) -> list[str]:
    return [value for value, _ in form.fields[FIELD].choices if value]


def test_the_hyperpod_form_lists_the_organizations_training_plan(world, plan):
    odcr = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaa0")
    form = LaunchForm(blueprint_slug="hyperpod", user=world.lead_a, initial={"organization": world.org_a.pk})
    assert _choices(form) == [PLAN]  # a training plan, never an EC2 reservation
    assert odcr.reservation_id not in _choices(form)
    assert "training plan" in str(form.fields[FIELD].help_text)


def test_the_plan_is_offered_on_the_page_and_after_an_htmx_reload_for_its_instance_type(client, world, plan):
    client.force_login(world.lead_a)
    html = client.get(HYPERPOD, {"organization": world.org_a.pk}).content.decode()
    block = html.split('id="reservation-choices"', 1)[1].split("</label>", 1)[0]
    assert "change from:#id_cluster__WorkerInstanceType" in block
    sent = {"organization": world.org_a.pk, "region": "ap-northeast-1", "cluster__WorkerInstanceType": "ml.trn1.32xlarge",
            FIELD: ""}
    page = client.get(HYPERPOD, sent, HTTP_HX_REQUEST="true").content.decode()
    assert PLAN in page.split('id="reservation-choices"', 1)[1].split("</select>", 1)[0]
    page = client.get(HYPERPOD, {**sent, "cluster__WorkerInstanceType": "ml.p5.48xlarge"}, HTTP_HX_REQUEST="true")
    assert PLAN not in page.content.decode().split('id="reservation-choices"', 1)[1].split("</select>", 1)[0]


def test_a_plan_for_another_instance_type_is_named_with_what_to_choose(client, world, plan):
    """The form opens on P5: the organization's Trainium plan is named in the field's help, with what to choose."""
    client.force_login(world.lead_a)
    sent = {"organization": world.org_a.pk, "region": "ap-northeast-1", "cluster__WorkerInstanceType": "ml.p5.48xlarge",
            FIELD: ""}
    block = client.get(HYPERPOD, sent, HTTP_HX_REQUEST="true").content.decode().split('id="reservation-choices"', 1)[1]
    block = block.split("</small>", 1)[0] if "</small>" in block else block[:3000]
    assert PLAN not in block.split("</select>", 1)[0]
    assert "alpha-trn1-cycle2 (16 × trn1.32xlarge in ap-northeast-1)" in block
    assert "choose that instance type and region to use it" in block
    client.cookies["portal_language"] = "ja"
    block = client.get(HYPERPOD, sent, HTTP_HX_REQUEST="true", headers={"Accept-Language": "ja"}).content.decode()
    assert "インスタンスタイプとリージョンを選ぶと使えます" in block
