"""Lessons learned: searchable across organizations by lead SAs and program managers, never by
customers; full-text on PostgreSQL, substring elsewhere (run the suite with DATABASE_URL for both)."""
import pytest
from django.urls import reverse

from tests.conftest import MARKER_A
from tests.interactions.factories_interactions import InteractionFactory
from workloads.interactions.desk import search


@pytest.fixture
def lessons(world):
    a = InteractionFactory(organization=world.org_a, status="resolved", summary=f"NCCL over sockets {MARKER_A}",
                           lesson="Install the aws-ofi-nccl plugin and set FI_PROVIDER=efa before launching.",
                           visibility="internal")
    b = InteractionFactory(organization=world.org_b, status="resolved", summary="Slow checkpoints",
                           lesson="Raise FSx for Lustre throughput per TiB; checkpoints were throughput-bound.")
    InteractionFactory(organization=world.org_b, status="open", summary="unresolved", lesson="not yet a lesson")
    return a, b


def test_search_spans_organizations_for_leads_and_pms(world, lessons):
    a, b = lessons
    for user in (world.lead_b, world.pm, world.staff):
        assert list(search.lessons(user, "plugin")) == [a]
        assert list(search.lessons(user, "checkpoints throughput")) == [b]
        assert set(search.lessons(user)) == {a, b}


def test_customers_cannot_search_lessons(client, world, lessons):
    assert not search.lessons(world.customer_a, "plugin").exists()
    for user in (world.customer_a, world.customer_b):
        client.force_login(user)
        assert client.get(reverse("interactions:lesson_search"), {"q": "plugin"}).status_code == 403


def test_lesson_page_links_only_to_interactions_the_lead_may_open(client, world, lessons):
    a, b = lessons
    client.force_login(world.lead_b)
    page = client.get(reverse("interactions:lesson_search"), {"q": "FI_PROVIDER"}).content.decode()
    assert "aws-ofi-nccl" in page and a.get_absolute_url() not in page
    page = client.get(reverse("interactions:lesson_search"), {"q": "Lustre"}).content.decode()
    assert b.get_absolute_url() in page
    assert "not yet a lesson" not in client.get(reverse("interactions:lesson_search")).content.decode()


def test_demo_seed_is_idempotent_and_models_the_case_study(db):
    from django.core.management import call_command

    from workloads.enablement.models import EnablementAttendance, EnablementSession
    from workloads.enablement.views import with_scores
    from workloads.interactions.models import Interaction

    call_command("seed_demo")
    counts = (Interaction.objects.count(), EnablementAttendance.objects.count())
    call_command("seed_demo")
    assert (Interaction.objects.count(), EnablementAttendance.objects.count()) == counts == (5, 84)
    session = with_scores(EnablementSession.objects.all()).get()
    assert session.attendance_count == 84 and session.average_score == 4.75
    assert Interaction.objects.filter(severity="critical", status="waiting_aws").exists()
    kotoba = Interaction.objects.get(summary__startswith="All-reduce at 4 GB/s")
    assert kotoba.lesson and kotoba.status == "resolved"
    assert Interaction.objects.filter(visibility="internal").exists()
