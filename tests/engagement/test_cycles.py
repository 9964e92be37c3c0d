"""Program cycles: rows default to the active cycle, archived cycles are read-only, starting the next cycle
carries organizations, lead SAs, blueprints and lessons over, and the cycle report (page, PDF, CSV)."""
from __future__ import annotations

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.core.models import Cycle, CycleParticipation
from portal.engagement import cycles
from portal.engagement.models import Milestone, TrainedModel
from tests.interactions.factories_interactions import (
    AttendanceFactory,
    EnablementSessionFactory,
    InteractionFactory,
)
from tests.workloads.factories_workloads import InstanceQuotaFactory
from workloads.models import InstanceQuota

pytestmark = pytest.mark.django_db


@pytest.fixture
def cycle(world):
    """A fresh active cycle with organizations A and B and their lead SAs."""
    Cycle.objects.filter(status="active").update(status="archived")
    current = Cycle.objects.create(number=50, name="Cycle 50", status="active",
                                   starts_on=timezone.localdate() - datetime.timedelta(days=30))
    for org, lead in ((world.org_a, world.lead_a), (world.org_b, world.lead_b)):
        CycleParticipation.objects.create(cycle=current, organization=org).lead_sas.set([lead])
    return current


def test_the_migration_gives_the_program_an_active_cycle():
    assert Cycle.objects.filter(status="active").count() == 1


def test_new_rows_belong_to_the_active_cycle(cycle, world):
    quota = InstanceQuotaFactory(organization=world.org_a)
    session = EnablementSessionFactory(audience=[world.org_a])
    model = TrainedModel.objects.create(organization=world.org_a, name="m", parameters_billions=8,
                                        instance_type="p5.48xlarge", instance_count=1)
    assert quota.cycle == session.cycle == model.cycle == cycle


def test_only_one_cycle_is_active(cycle):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        Cycle.objects.create(number=51, name="second active", status="active")


def test_archived_cycle_rows_are_read_only_for_everyone(cycle, world, client):
    quota = InstanceQuotaFactory(organization=world.org_a)
    from portal.core import access

    assert access.can(world.pm, access.CHANGE, quota)
    Cycle.objects.filter(pk=cycle.pk).update(status="archived")
    assert not access.can(world.pm, access.CHANGE, quota)
    assert not access.can(world.staff, access.CHANGE, quota)
    assert access.can(world.pm, access.VIEW, quota)
    client.force_login(world.pm)
    assert client.get(reverse("workloads:quota_edit", args=[quota.pk])).status_code == 403
    quota.refresh_from_db()
    assert InstanceQuota.objects.filter(pk=quota.pk).exists()


def test_start_next_cycle_carries_organizations_leads_blueprints_and_lessons(cycle, world, client):
    from clusters.blueprints import catalog

    blueprint = catalog.sync()["parallelcluster"]
    cycle.blueprints.set([blueprint])
    InteractionFactory(organization=world.org_a, summary="sockets", lesson="Check the OFI provider line.",
                       occurred_at=timezone.now() - datetime.timedelta(days=3))
    InteractionFactory(organization=world.org_a, summary="ancient", lesson="From before the cycle.",
                       occurred_at=timezone.now() - datetime.timedelta(days=90))
    client.force_login(world.pm)
    response = client.post(reverse("engagement:cycle_start_next"),
                           {"name": "Cycle 51", "continuing": [world.org_a.pk]})
    assert response.status_code == 200 and "Confirm: start the next cycle now" in response.content.decode()
    assert Cycle.objects.get(status="active") == cycle  # the summary asks; nothing is started yet
    response = client.post(reverse("engagement:cycle_start_next"),
                           {"name": "Cycle 51", "continuing": [world.org_a.pk], "confirm": "yes"})
    assert response.status_code == 302
    nxt = Cycle.objects.get(status="active")
    cycle.refresh_from_db()
    assert (nxt.name, nxt.number, cycle.status) == ("Cycle 51", 51, "archived")
    assert cycle.ends_on == timezone.localdate() - datetime.timedelta(days=1)
    participation = nxt.participations.get()
    assert participation.organization == world.org_a and list(participation.lead_sas.all()) == [world.lead_a]
    assert list(nxt.blueprints.all()) == [blueprint]
    assert "Check the OFI provider line." in nxt.lessons_carried and "From before" not in nxt.lessons_carried
    # The new cycle takes new rows; the old one stays with its own.
    assert InstanceQuotaFactory(organization=world.org_a).cycle == nxt


def test_start_next_refuses_bad_input_and_writes_nothing(cycle, world, client):
    client.force_login(world.pm)
    response = client.post(reverse("engagement:cycle_start_next"), {"continuing": []})
    assert response.status_code == 400
    outsider = type(world.org_a).objects.create(name="Not in cycle", slug="not-in", aws_account_id="999999999999")
    with pytest.raises(cycles.CycleError, match="do not take part"):
        cycles.start_next(world.pm, continuing=[world.org_a.pk, outsider.pk])
    with pytest.raises(cycles.CycleError, match="before the current one"):
        cycles.start_next(world.pm, continuing=[world.org_a.pk], starts_on=cycle.starts_on - datetime.timedelta(1))
    Cycle.objects.create(number=51, name="taken", status="planned")
    with pytest.raises(cycles.CycleError, match="already exists"):
        cycles.start_next(world.pm, continuing=[world.org_a.pk])
    assert Cycle.objects.get(status="active") == cycle and cycle.participations.count() == 2


def test_only_program_managers_start_the_next_cycle(cycle, world, client):
    for user in (world.lead_a, world.customer_a):
        client.force_login(user)
        assert client.post(reverse("engagement:cycle_start_next"), {"continuing": [world.org_a.pk]}).status_code == 403
        response = client.post(reverse("engagement-api:cycle-start-next"), {"continuing": [world.org_a.slug]},
                               content_type="application/json")
        assert response.status_code == 403
    assert Cycle.objects.get(status="active") == cycle
    client.force_login(world.pm)
    response = client.post(reverse("engagement-api:cycle-start-next"), {"continuing": [world.org_b.slug], "confirm": True},
                           content_type="application/json")
    assert response.status_code == 201 and response.json()["number"] == 51


def _report_world(cycle, world):
    from tests.clusters.factories_clusters import ready_cluster

    Milestone.objects.create(organization=world.org_a, kind="model_released", reached_on=cycle.starts_on)
    TrainedModel.objects.create(organization=world.org_a, name="Alpha-100B", parameters_billions=100,
                                instance_type="p5.48xlarge", instance_count=32)
    ready_cluster(world.org_a, name="alpha-c")
    InteractionFactory(organization=world.org_a, status="resolved")
    InteractionFactory(organization=world.org_b)
    session = EnablementSessionFactory(audience=[world.org_a, world.org_b])
    AttendanceFactory(session=session, organization=world.org_a, satisfaction=5)
    AttendanceFactory(session=session, organization=world.org_b, satisfaction=4)


def test_cycle_report_figures(cycle, world):
    _report_world(cycle, world)
    data = cycles.report(cycle)
    a = next(r for r in data["organizations"] if r["slug"] == world.org_a.slug)
    assert a["models"] == ["Alpha-100B (100B Text, 32 × p5.48xlarge)"] and a["milestones"]["model_released"]
    assert (a["clusters"], a["interactions"], a["resolved"], a["satisfaction"]) == (1, 1, 1, 5.0)
    t = data["totals"]
    assert (t["organizations"], t["models"], t["released"], t["clusters"], t["interactions"]) == (2, 1, 1, 1, 2)
    assert (t["sessions"], t["satisfaction"]) == (1, 4.5)


def test_cycle_report_query_count_is_constant(cycle, world, django_assert_max_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import OrganizationFactory

    def grow(n):
        for i in range(n):
            org = OrganizationFactory()
            CycleParticipation.objects.create(cycle=cycle, organization=org)
            InteractionFactory(organization=org)
            Milestone.objects.create(organization=org, kind="onboarded", reached_on=cycle.starts_on)

    grow(2)
    with CaptureQueriesContext(connection) as small:
        cycles.report(cycle)
    grow(20)
    with CaptureQueriesContext(connection) as large:
        assert cycles.report(cycle)["totals"]["organizations"] == 24
    assert len(small.captured_queries) == len(large.captured_queries)


def test_cycle_report_pdf_and_csv_for_program_managers(cycle, world, client):
    _report_world(cycle, world)
    client.force_login(world.pm)
    pdf = client.get(reverse("engagement:cycle_report_pdf", args=[cycle.pk]))
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    from tests.engagement.test_outcomes import _body, _pdf_text

    assert "Alpha-100B" in _pdf_text(pdf.content)
    csv = _body(client.get(reverse("engagement:cycle_report_csv", args=[cycle.pk])))
    assert csv.splitlines()[0].startswith("Organization,Onboarded") and "Alpha-100B" in csv
    client.force_login(world.lead_a)
    assert client.get(reverse("engagement:cycle_report_pdf", args=[cycle.pk])).status_code == 403


def test_cycle_page_shows_only_what_the_user_sees(cycle, world, client):
    _report_world(cycle, world)
    client.force_login(world.customer_b)
    page = client.get(cycle.get_absolute_url()).content.decode()
    assert "Beta Works" in page and "Alpha-100B" not in page
    Cycle.objects.filter(pk=cycle.pk).update(status="archived")
    client.force_login(world.customer_a)
    page = client.get(cycle.get_absolute_url()).content.decode()
    assert "archived: its rows are read-only" in page and "Alpha-100B" in page
