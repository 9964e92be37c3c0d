"""Outcomes: milestones with dates and trained models per organization; customers update their own; the
organization page, the overview and the review's PDF show them."""
from __future__ import annotations

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.core.models import TimelineEntry
from portal.engagement import outcomes
from portal.engagement.models import Milestone, TrainedModel
from tests.engagement.factories_engagement import TrainedModelFactory
from tests.queries import assert_flat_queries

pytestmark = pytest.mark.django_db


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def _pdf_text(data: bytes) -> str:
    """The page content streams of a reportlab PDF (ASCII85, then zlib), decoded."""
    import base64
    import re
    import zlib

    chunks = []
    for raw in re.findall(rb"stream\r?\n(.*?)endstream", data, re.S):
        raw = raw.strip()
        if raw.endswith(b"~>"):
            raw = base64.a85decode(raw[:-2], adobe=False)
        try:
            chunks.append(zlib.decompress(raw).decode("latin-1"))
        except zlib.error:
            chunks.append(raw.decode("latin-1"))
    return "".join(chunks)


def test_customer_records_milestones_of_their_own_organization(client, world):
    client.force_login(world.customer_a)
    url = reverse("engagement:outcomes", args=[world.org_a.slug])
    response = client.post(url, {"onboarded": "2026-06-01", "cluster_validated": "2026-06-10"})
    assert response.status_code == 302
    assert dict(Milestone.objects.filter(organization=world.org_a).values_list("kind", "reached_on")) == {
        "onboarded": datetime.date(2026, 6, 1), "cluster_validated": datetime.date(2026, 6, 10)}
    assert TimelineEntry.objects.filter(title="Milestone reached: Cluster validated", visibility="shared").exists()
    # Clearing a date removes the milestone; an unchanged one is not reported again.
    client.post(url, {"onboarded": "2026-06-01", "cluster_validated": ""})
    assert list(Milestone.objects.values_list("kind", flat=True)) == ["onboarded"]
    assert TimelineEntry.objects.filter(title__startswith="Milestone reached").count() == 2


def test_a_future_milestone_is_refused_and_nothing_is_written(client, world):
    client.force_login(world.customer_a)
    tomorrow = timezone.localdate() + datetime.timedelta(days=1)
    response = client.post(reverse("engagement:outcomes", args=[world.org_a.slug]),
                           {"onboarded": "2026-06-01", "model_trained": tomorrow.isoformat()})
    assert response.status_code == 400 and "once it is reached" in response.content.decode()
    assert not Milestone.objects.exists()


def test_others_may_not_record_outcomes(client, world):
    for user, code in ((world.customer_b, 404), (world.pm, 403)):
        client.force_login(user)
        assert client.post(reverse("engagement:outcomes", args=[world.org_a.slug]),
                           {"onboarded": "2026-06-01"}).status_code == code
    assert not Milestone.objects.exists()


def test_customer_records_and_edits_a_trained_model(client, world):
    client.force_login(world.customer_a)
    data = {"name": "Alpha-VL-32B", "parameters_billions": "32", "modality": "multimodal", "tokens_billions": "1200",
            "instance_type": "trn1.32xlarge", "instance_count": "24", "release_url": "https://example.com/alpha-vl",
            "released_on": "", "notes": ""}
    response = client.post(reverse("engagement:trainedmodel_add", args=[world.org_a.slug]), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    model = TrainedModel.objects.get()
    assert (model.organization, model.instance_count, model.updated_by) == (world.org_a, 24, world.customer_a)
    response = client.post(reverse("engagement:trainedmodel_add", args=[world.org_a.slug]), data)
    assert response.status_code == 400 and "already recorded" in response.content.decode()
    bad = {**data, "name": "other", "instance_type": "p9.mega"}
    assert client.post(reverse("engagement:trainedmodel_add", args=[world.org_a.slug]), bad).status_code == 400
    response = client.post(reverse("engagement:trainedmodel_edit", args=[model.pk]), {**data, "instance_count": "32"})
    assert response.status_code == 302
    model.refresh_from_db()
    assert model.instance_count == 32 and TrainedModel.objects.count() == 1


def test_organization_page_overview_and_pdf_show_outcomes(client, world):
    Milestone.objects.create(organization=world.org_a, kind="model_trained", reached_on=datetime.date(2026, 9, 1))
    TrainedModelFactory(organization=world.org_a, name="Alpha-405B", parameters_billions=405)
    client.force_login(world.customer_a)
    page = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "Alpha-405B" in page and "Model trained 2026-09-01" in page
    client.force_login(world.pm)
    overview = client.get(reverse("review:overview")).content.decode()
    assert "Alpha-405B (405B, Text, 16 × p5.48xlarge)" in overview
    csv = _body(client.get(reverse("review:overview_csv", args=["outcomes"])))
    assert "Alpha-405B (405B Text, 16 × p5.48xlarge)" in csv and "2026-09-01" in csv
    from portal.review import services

    review = services.freeze(world.pm)
    pdf = client.get(reverse("review:review_pdf", args=[review.pk]))
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert review.figures["outcomes"][0]["models"][0]["name"] == "Alpha-405B"
    text = _pdf_text(pdf.content)
    assert "(Outcomes)" in text and "Alpha-405B" in text


def test_outcome_figures_stay_within_what_the_user_sees(world):
    TrainedModelFactory(organization=world.org_a, name="alpha-secret")
    TrainedModelFactory(organization=world.org_b, name="beta-model")
    assert [r["organization"] for r in outcomes.figures(world.customer_b)] == ["Beta Works"]
    assert len(outcomes.figures(world.pm)) == 2


def test_outcome_figures_query_count_is_constant(world):
    from tests.factories import OrganizationFactory

    def grow(n):
        for _ in range(n):
            org = OrganizationFactory()
            TrainedModelFactory(organization=org)
            Milestone.objects.create(organization=org, kind="onboarded", reached_on=datetime.date(2026, 1, 1))

    small, large = assert_flat_queries(lambda: outcomes.figures(world.pm), grow=grow, sizes=(2, 17), at_most=2)
    assert small == large == 2
    assert len(outcomes.figures(world.pm)) == 17


def test_api_customer_updates_own_outcomes_only(client, world):
    client.force_login(world.customer_a)
    url = reverse("engagement-api:trainedmodel-list")
    data = {"organization": world.org_a.slug, "name": "Alpha-8B", "parameters_billions": "8", "modality": "code",
            "instance_type": "p5.48xlarge", "instance_count": 4}
    response = client.post(url, data, content_type="application/json")
    assert response.status_code == 201, response.content
    assert client.post(url, {**data, "organization": world.org_b.slug},
                       content_type="application/json").status_code == 400
    assert client.post(url, {**data, "name": "x", "instance_type": "p9.mega"},
                       content_type="application/json").status_code == 400
    milestones = reverse("engagement-api:milestone-list")
    assert client.post(milestones, {"organization": world.org_a.slug, "kind": "onboarded", "reached_on": "2026-05-01"},
                       content_type="application/json").status_code == 201
    assert client.post(milestones, {"organization": world.org_a.slug, "kind": "onboarded", "reached_on": "2026-05-02"},
                       content_type="application/json").status_code == 400
    client.force_login(world.pm)
    assert client.post(url, {**data, "name": "pm-model"}, content_type="application/json").status_code == 403
    assert TrainedModel.objects.count() == 1 and Milestone.objects.count() == 1
