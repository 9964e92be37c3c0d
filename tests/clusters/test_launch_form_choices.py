"""The launch form's reservation choices follow the chosen organization (reloaded with htmx), and the
availability zone is not asked for when the chosen reservation fixes it."""
from __future__ import annotations

import pytest

from clusters.forms import LaunchForm
from clusters.launches import service as launch
from clusters.models import Cluster
from portal.core.choices import MembershipRole
from tests.clusters.test_launch_views import LAUNCH, _form
from tests.factories import MembershipFactory, OrganizationFactory
from tests.workloads.factories_workloads import CapacityReservationFactory, InstanceQuotaFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quotas")]
FIELD = "cluster__CapacityReservationId"


@pytest.fixture
def two_orgs(world):
    """lead_a leads organization A and Gamma, each with a reservation of the same type and region."""
    gamma = OrganizationFactory(name="Gamma Labs", slug="gamma-labs")
    MembershipFactory(user=world.lead_a, organization=gamma, role=MembershipRole.LEAD_SA)
    InstanceQuotaFactory(organization=gamma, instance_type_name="p5.48xlarge", count=16, region="ap-northeast-1")
    ours = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaa0",
                                      availability_zone="ap-northeast-1c")
    gammas = CapacityReservationFactory(organization=gamma, reservation_id="cr-0ccccccccccccccc0")
    return gamma, ours, gammas


def _choices(form) -> list[str]:
    return [value for value, _ in form.fields[FIELD].choices if value]


def _reservation_block(html: str) -> str:
    return html.split('id="reservation-choices"', 1)[1].split("</label>", 1)[0]


def test_no_organization_chosen_offers_no_one_elses_reservations(world, two_orgs):
    gamma, ours, gammas = two_orgs
    assert _choices(LaunchForm(blueprint_slug="parallelcluster", user=world.lead_a)) == []
    assert _choices(LaunchForm(blueprint_slug="parallelcluster", user=world.lead_a,
                               initial={"organization": gamma.pk})) == [gammas.reservation_id]
    assert _choices(LaunchForm(blueprint_slug="parallelcluster", user=world.lead_a,
                               initial={"organization": world.org_a.pk})) == [ours.reservation_id]
    # A lead of one organization has it chosen already, and its reservations listed.
    only = LaunchForm(blueprint_slug="parallelcluster", user=world.lead_b)
    assert only.initial["organization"] == world.org_b.pk


def test_choosing_an_organization_reloads_its_reservations(client, world, two_orgs):
    """What htmx sends when the organization changes: the page's reservation block for that organization."""
    gamma, ours, gammas = two_orgs
    client.force_login(world.lead_a)
    html = client.get(LAUNCH).content.decode()
    block = _reservation_block(html)
    assert ours.reservation_id not in block and gammas.reservation_id not in block
    assert "Choose the organization first." in block
    head = block.split("\">", 1)[0]  # the opening tag (its hx-select holds a ">")
    assert f'hx-get="{LAUNCH}"' in head and 'hx-select="#reservation-choices > *"' in head
    assert 'hx-swap="innerHTML' in head
    assert "change from:#id_organization" in head and "change from:#id_cluster__ComputeInstanceType" in head
    assert f"#id_{FIELD}" in head.split("hx-include=", 1)[1]

    sent = {"organization": gamma.pk, "region": "ap-northeast-1", "cluster__ComputeInstanceType": "p5.48xlarge",
            FIELD: ""}
    block = _reservation_block(client.get(LAUNCH, sent, HTTP_HX_REQUEST="true").content.decode())
    assert gammas.reservation_id in block and ours.reservation_id not in block
    sent = {**sent, "organization": world.org_a.pk, FIELD: ours.reservation_id}
    block = _reservation_block(client.get(LAUNCH, sent, HTTP_HX_REQUEST="true").content.decode())
    assert f'<option value="{ours.reservation_id}" selected>' in block and gammas.reservation_id not in block
    # Another instance type: the reservation no longer fits and is not offered, only named with what fits it.
    block = _reservation_block(client.get(LAUNCH, {**sent, "cluster__ComputeInstanceType": "trn1.32xlarge"}).content
                               .decode())
    assert ours.reservation_id not in block.split("</select>", 1)[0]
    assert f"{ours.reservation_id} (8 × p5.48xlarge in ap-northeast-1)" in block


def test_another_organizations_reservation_is_refused_in_words(client, world, two_orgs):
    gamma, ours, gammas = two_orgs
    client.force_login(world.lead_a)
    response = client.post(LAUNCH, _form(world.org_a, **{FIELD: gammas.reservation_id}))
    assert response.status_code == 400 and not Cluster.objects.exists()
    errors = " ".join(response.context["form"].errors[FIELD])
    assert "not one of the chosen organization's reservations" in errors and "Select a valid choice" not in errors
    response = client.post(LAUNCH, _form(gamma, **{FIELD: gammas.reservation_id}, name="gamma-p5"))
    assert response.status_code == 302
    assert Cluster.objects.get().parameters["cluster"]["CapacityReservationId"] == gammas.reservation_id


def test_the_zone_comes_from_the_chosen_reservation(client, world, two_orgs):
    gamma, ours, gammas = two_orgs
    client.force_login(world.lead_a)
    html = client.get(LAUNCH, {"organization": world.org_a.pk}).content.decode()
    zone_label = html.split('for="id_network__AvailabilityZone"', 1)[1].split("<select", 1)[0]
    assert 'aria-hidden="true">*' not in zone_label  # not marked required
    response = client.post(LAUNCH, _form(world.org_a, network__AvailabilityZone="", **{FIELD: ours.reservation_id}))
    assert response.status_code == 302, response.context["form"].errors
    cluster = Cluster.objects.get()
    assert cluster.availability_zone == "ap-northeast-1c"
    assert cluster.parameters["network"]["AvailabilityZone"] == "ap-northeast-1c"


def test_without_a_reservation_the_zone_is_still_needed(client, world, two_orgs):
    client.force_login(world.lead_a)
    response = client.post(LAUNCH, _form(world.org_a, network__AvailabilityZone=""))
    assert response.status_code == 400 and not Cluster.objects.exists()
    assert str(response.context["form"].errors["network__AvailabilityZone"]).count(
        "Choose an availability zone of the region, or a reservation (it sets the zone).") == 1
    # A reservation that does not fit cannot give its zone: both fields say why.
    unfit = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0ddddddddddddddd0",
                                       instance_type_name="trn1.32xlarge")
    response = client.post(LAUNCH, _form(world.org_a, network__AvailabilityZone="", **{FIELD: unfit.reservation_id}))
    errors = response.context["form"].errors
    assert response.status_code == 400 and not Cluster.objects.exists()
    assert "reserves trn1.32xlarge" in " ".join(errors[FIELD])
    assert "unless a reservation valid for this launch is chosen" in str(errors["network__AvailabilityZone"])


def test_the_service_takes_the_zone_from_the_reservation_for_the_api_too(world, two_orgs):
    gamma, ours, gammas = two_orgs
    params = {k.split("__", 1)[1]: v for k, v in _form(world.org_a).items() if k.startswith("cluster__")}
    storage = {k.split("__", 1)[1]: v for k, v in _form(world.org_a).items() if k.startswith("storage__")}
    request = launch.LaunchRequest(organization=world.org_a, name="api-p5", blueprint="parallelcluster",
                                   region="ap-northeast-1", full_stack=True, user=world.lead_a,
                                   parameters={"network": {}, "storage": storage,
                                               "cluster": {**params, "CapacityReservationId": ours.reservation_id}})
    checked = launch.check(request)
    assert checked.parameters["network"]["AvailabilityZone"] == "ap-northeast-1c"
    request.parameters["cluster"].pop("CapacityReservationId")
    with pytest.raises(launch.LaunchRefused) as refused:
        launch.check(request)
    assert refused.value.errors["network__AvailabilityZone"] == "is required"


def test_the_zones_follow_the_region_and_a_missing_zone_reads_as_words(client, world):
    """The zone list holds the chosen region's zones (reloaded with the region), not the six regions' together;
    a launch without zone nor reservation says what to do, not the template's raw ``AvailabilityZone is
    required``."""
    from clusters.launches import labels

    form = LaunchForm(blueprint_slug="parallelcluster", user=world.lead_a,
                      initial={"organization": world.org_a.pk, "region": "us-east-1"})
    zones = [value for _, group in form.fields["network__AvailabilityZone"].widget.choices[1:] for value, _ in group]
    assert zones and all(z.startswith("us-east-1") for z in zones)
    assert len(labels.zone_choices()) > len(labels.zone_choices("us-east-1"))
    client.force_login(world.lead_a)
    html = client.get(LAUNCH, {"organization": world.org_a.pk, "region": "ap-northeast-1"}).content.decode()
    block = html.split('id="zone-choices"', 1)[1].split("</select>", 1)[0]
    assert "ap-northeast-1a" in block and "us-east-1a" not in block
    response = client.post(LAUNCH, _form(world.org_a, **{"network__AvailabilityZone": ""}))
    body = response.content.decode()
    assert response.status_code == 400 and not Cluster.objects.filter(name="p5-train").exists()
    assert "AvailabilityZone is required" not in body
    assert "Choose an availability zone of the region, or a reservation (it sets the zone)." in body

