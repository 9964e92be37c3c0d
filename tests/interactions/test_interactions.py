"""Support interactions: the quick log, the full form, history, ageing, escalation, and what each
role sees on every page, partial and export."""
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.core.markdown import render
from portal.core.models import TimelineEntry
from tests.conftest import MARKER_A
from tests.interactions.factories_interactions import InteractionFactory
from tests.queries import assert_flat_queries
from workloads.interactions import services
from workloads.interactions.desk import tagging
from workloads.interactions.models import ChallengeTag, Interaction, InteractionComment


@pytest.fixture
def shared_and_internal(world):
    shared = InteractionFactory(organization=world.org_a, summary=f"shared {MARKER_A}", visibility="shared")
    internal = InteractionFactory(organization=world.org_a, summary="INTERNAL-ONLY capacity talk",
                                  visibility="internal", body="INTERNAL-BODY")
    return shared, internal


# Markdown ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dangerous", [
    "<script>alert('x')</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    '<a href="javascript:alert(1)">x</a>',
    '<div onclick="steal()">hi</div>',
    "<iframe src='https://evil.example'></iframe>",
])
def test_markdown_renders_dangerous_input_harmless(dangerous):
    html = str(render(dangerous)).lower()
    for needle in ("<script", "onerror", "javascript:", "onclick", "<iframe", "alert(1)</"):
        assert needle not in html


def test_markdown_keeps_formatting_and_marks_links():
    html = str(render("**bold** and [docs](https://docs.aws.amazon.com/)\n\n```\nNCCL INFO\n```"))
    assert "<strong>bold</strong>" in html
    assert 'href="https://docs.aws.amazon.com/"' in html and 'rel="noopener noreferrer"' in html
    assert "<pre><code>NCCL INFO" in html


def test_body_is_rendered_sanitized_on_the_page(client, world):
    obj = InteractionFactory(organization=world.org_a, body="<script>alert(1)</script>**fine**")
    client.force_login(world.lead_a)
    page = client.get(obj.get_absolute_url()).content.decode()
    assert "<strong>fine</strong>" in page and "<script>alert(1)" not in page


# Tags --------------------------------------------------------------------------------------------

def test_taxonomy_is_seeded_by_the_migration(db):
    slugs = set(ChallengeTag.objects.values_list("slug", flat=True))
    assert {"nccl-configuration", "efa-networking", "fsx-lustre-throughput", "s3-data-repository", "capacity-quota",
            "container-images", "slurm", "checkpointing", "hyperpod-node-recovery", "neuron-sdk", "iam-vpc"} <= slugs


def test_suggestions_follow_signatures(db):
    sockets = "NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\nNCCL INFO Using network Socket"
    slugs = [t.slug for t in tagging.suggest(sockets)]
    assert "nccl-configuration" in slugs and "efa-networking" in slugs  # NCCL logs without the EFA provider
    efa_ok = "NCCL INFO NET/OFI Selected Provider is efa, fabric is efa-direct"
    assert "efa-networking" not in [t.slug for t in tagging.suggest(efa_ok)]
    assert [t.slug for t in tagging.suggest("sbatch job pending on partition p5")] == ["slurm"]
    assert tagging.suggest("") == []


def test_suggest_endpoint_is_an_htmx_partial(client, world):
    client.force_login(world.lead_a)
    response = client.post(reverse("interactions:interaction_suggest_tags"),
                           {"summary": "Lustre slow", "body": "FSx throughput at 200 MB/s"}, headers={"HX-Request": "true"})
    assert response.status_code == 200 and b"FSx for Lustre throughput" in response.content
    assert b"<html" not in response.content
    client.force_login(world.customer_a)
    assert client.post(reverse("interactions:interaction_suggest_tags"), {"body": "x"}).status_code == 403


# Quick log and full form -------------------------------------------------------------------------

def test_quick_log_from_the_organization_page(client, world):
    client.force_login(world.lead_a)
    page = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "Quick log" in page and reverse("interactions:interaction_quick_log", args=[world.org_a.slug]) in page
    url = reverse("interactions:interaction_quick_log", args=[world.org_a.slug])
    response = client.post(url, {"kind": "chat", "summary": "FSx slow during checkpoint", "severity": "normal",
                                 "visibility": "shared", "body": "see thread", "tags": ["checkpointing"]},
                           headers={"HX-Request": "true"})
    assert response.status_code == 200
    body = response.content.decode()
    assert "<html" not in body and "FSx slow during checkpoint" in body and 'id="interactions-section"' in body
    obj = Interaction.objects.get(summary="FSx slow during checkpoint")
    assert obj.organization == world.org_a and obj.owner == world.lead_a and obj.created_by == world.lead_a
    assert [t.slug for t in obj.tags.all()] == ["checkpointing"]
    assert obj.history.filter(kind="created").count() == 1
    entry = TimelineEntry.objects.get(object_id=obj.pk, kind="interaction")
    assert entry.visibility == "shared" and entry.tags == ["checkpointing"]
    # The status section's count, elsewhere on the page, comes back out of band.
    oob = body.split('id="org-open-count"', 1)[1].split("</p>", 1)[0]
    assert 'hx-swap-oob="true"' in oob and "<strong>1</strong> open" in oob
    page = client.get(world.org_a.get_absolute_url()).content.decode()
    assert page.count('id="org-open-count"') == 1


def test_quick_log_errors_are_shown_and_nothing_is_written(client, world):
    client.force_login(world.lead_a)
    url = reverse("interactions:interaction_quick_log", args=[world.org_a.slug])
    response = client.post(url, {"kind": "chat", "summary": "", "severity": "apocalyptic", "visibility": "shared",
                                 "tags": ["no-such-tag"]}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert "This field is required" in body
    assert "apocalyptic is not one of the available choices" in body
    assert "Unknown challenge tag “no-such-tag”" in body
    assert not Interaction.objects.exists() and not TimelineEntry.objects.exists()


def test_customers_and_other_leads_cannot_quick_log(client, world):
    url = reverse("interactions:interaction_quick_log", args=[world.org_a.slug])
    client.force_login(world.customer_a)
    assert client.post(url, {"kind": "chat", "summary": "x", "severity": "low", "visibility": "shared"}).status_code == 403
    client.force_login(world.lead_b)
    assert client.post(url, {"kind": "chat", "summary": "x", "severity": "low", "visibility": "shared"}).status_code == 404
    assert not Interaction.objects.exists()


def _form(world, **overrides):
    data = {"organization": world.org_a.pk, "kind": "support_case", "summary": "EFA missing on p5",
            "body": "fi_info -p efa shows nothing", "occurred_at": timezone.now().strftime("%Y-%m-%dT%H:%M"),
            "status": "open", "severity": "high", "owner": world.lead_a.pk, "visibility": "internal",
            "support_case_id": "", "resolution": "", "lesson": "", "tags": ["efa-networking"]}
    data.update(overrides)
    return data


def test_full_form_creates_and_records_status_and_owner_changes(client, world):
    second_lead = world.lead_b
    from portal.core.models import Membership

    Membership.objects.create(user=second_lead, organization=world.org_a, role="lead_sa")
    client.force_login(world.lead_a)
    response = client.post(reverse("interactions:interaction_add"), _form(world))
    assert response.status_code == 302
    obj = Interaction.objects.get()
    assert obj.visibility == "internal" and obj.created_by == world.lead_a
    response = client.post(reverse("interactions:interaction_edit", args=[obj.pk]),
                           _form(world, status="waiting_aws", owner=second_lead.pk))
    assert response.status_code == 302
    kinds = list(obj.history.values_list("kind", "old_value", "new_value"))
    assert ("status", "Open", "Waiting on AWS") in kinds and ("owner", "lead_a", "lead_b") in kinds
    obj.refresh_from_db()
    assert obj.first_response_at is not None
    assert TimelineEntry.objects.filter(object_id=obj.pk, visibility="internal").count() == 2


@pytest.mark.parametrize(("field", "value", "message"), [
    ("severity", "urgent", "Select a valid choice"),
    ("occurred_at", "2999-01-01T00:00", "more than a day from now"),
    ("support_case_id", "12345", "Expected case-"),
    ("tags", ["quantum-flux"], "Unknown challenge tag"),
])
def test_full_form_bad_input_gets_clear_errors(client, world, field, value, message):
    client.force_login(world.lead_a)
    response = client.post(reverse("interactions:interaction_add"), _form(world, **{field: value}))
    assert response.status_code == 400 and message in response.content.decode()
    assert not Interaction.objects.exists()


# History, comments, escalation, ageing -----------------------------------------------------------

def test_customer_comments_on_shared_interaction_and_never_sees_internal_comments(client, world):
    obj = InteractionFactory(organization=world.org_a, visibility="shared")
    client.force_login(world.lead_a)
    client.post(reverse("interactions:interaction_comment", args=[obj.pk]),
                {"body": "INTERNAL-NOTE: customer is on old EFA installer", "internal": "on"})
    client.post(reverse("interactions:interaction_comment", args=[obj.pk]), {"body": "Please try installer 1.38"})
    client.force_login(world.customer_a)
    response = client.post(reverse("interactions:interaction_comment", args=[obj.pk]),
                           {"body": "Done, still sockets", "internal": "on"})
    assert response.status_code == 302
    mine = InteractionComment.objects.get(body="Done, still sockets")
    assert mine.internal is False and mine.author == world.customer_a
    page = client.get(obj.get_absolute_url()).content.decode()
    assert "Please try installer 1.38" in page and "Done, still sockets" in page
    assert "INTERNAL-NOTE" not in page
    api = client.get(reverse("interactions-api:interaction-history", args=[obj.pk])).content.decode()
    assert "Please try installer" in api and "INTERNAL-NOTE" not in api
    client.force_login(world.lead_a)
    assert "INTERNAL-NOTE" in client.get(obj.get_absolute_url()).content.decode()


def test_first_response_comes_from_the_program_side(world):
    obj = InteractionFactory(organization=world.org_a, occurred_at=timezone.now() - timedelta(hours=5),
                             created_by=world.customer_a)
    services.comment(obj, world.customer_a, "any news?", internal=False)
    obj.refresh_from_db()
    assert obj.first_response_at is None
    services.comment(obj, world.lead_a, "looking", internal=False)
    obj.refresh_from_db()
    assert obj.first_response_time >= timedelta(hours=5) - timedelta(seconds=5)
    assert obj.first_response_time < timedelta(hours=5, minutes=1)


def test_first_response_is_the_leads_first_shared_comment_even_on_what_the_lead_logged(client, world):
    obj = InteractionFactory(organization=world.org_a, visibility="shared", created_by=world.lead_a,
                             occurred_at=timezone.now() - timedelta(hours=2))
    client.force_login(world.lead_a)
    assert "none yet" in client.get(obj.get_absolute_url()).content.decode()
    client.post(reverse("interactions:interaction_comment", args=[obj.pk]), {"body": "checking", "internal": "on"})
    obj.refresh_from_db()
    assert obj.first_response_at is None  # an internal note answers nobody
    client.post(reverse("interactions:interaction_comment", args=[obj.pk]), {"body": "Try EFA installer 1.38"})
    obj.refresh_from_db()
    assert obj.first_response_at is not None
    page = client.get(obj.get_absolute_url()).content.decode()
    assert "none yet" not in page and "after 2 h" in page


def test_escalation_is_recorded_and_only_by_those_who_may_change(client, world):
    obj = InteractionFactory(organization=world.org_a, visibility="shared", severity="high")
    client.force_login(world.customer_a)
    assert client.post(reverse("interactions:interaction_escalate", args=[obj.pk]), {"reason": "x"}).status_code == 403
    client.force_login(world.lead_a)
    assert client.post(reverse("interactions:interaction_escalate", args=[obj.pk]),
                       {"reason": "Training blocked for 3 days"}).status_code == 302
    obj.refresh_from_db()
    assert obj.escalated_at is not None
    assert obj.history.filter(kind="escalation", body="Training blocked for 3 days").exists()
    assert TimelineEntry.objects.filter(title__startswith="Escalated").exists()


def test_an_escalation_never_reaches_the_customer(client, world):
    obj = InteractionFactory(organization=world.org_a, visibility="shared", severity="high")
    client.force_login(world.lead_a)
    client.post(reverse("interactions:interaction_escalate", args=[obj.pk]),
                {"reason": "need WWSO Frameworks specialist", "target": "frameworks"})
    client.force_login(world.customer_a)
    pages = [client.get(obj.get_absolute_url()).content.decode(),
             client.get(reverse("portal:organization_detail", args=[world.org_a.slug])).content.decode(),
             client.get(reverse("portal:timeline", args=[world.org_a.slug])).content.decode(),
             client.get(reverse("interactions-api:interaction-history", args=[obj.pk])).content.decode()]
    assert all("WWSO" not in page for page in pages)
    assert client.get(obj.get_absolute_url()).status_code == 200
    assert TimelineEntry.objects.get(title__startswith="Escalated").visibility == "internal"


def test_open_interactions_oldest_first_on_org_page_and_lead_home(client, world):
    now = timezone.now()
    old = InteractionFactory(organization=world.org_a, summary="oldest open", occurred_at=now - timedelta(days=9))
    new = InteractionFactory(organization=world.org_a, summary="newest open", occurred_at=now - timedelta(days=1))
    InteractionFactory(organization=world.org_a, summary="closed one", status="resolved")
    InteractionFactory(organization=world.org_b, summary="other org open")
    client.force_login(world.lead_a)
    for url in (world.org_a.get_absolute_url(), reverse("portal:lead_home")):
        page = client.get(url).content.decode()
        assert page.index(old.summary) < page.index(new.summary)
        assert "closed one" not in page and "other org open" not in page
    assert "9 d" in client.get(reverse("portal:lead_home")).content.decode()


# Visibility everywhere ---------------------------------------------------------------------------

def test_customers_never_see_internal_interactions(client, world, shared_and_internal):
    shared, internal = shared_and_internal
    client.force_login(world.customer_a)
    pages = [
        reverse("interactions:interaction_list"),
        reverse("interactions:interaction_list") + "?export=csv",
        world.org_a.get_absolute_url(),
        reverse("portal:timeline", args=[world.org_a.slug]),
        reverse("interactions-api:interaction-list"),
        reverse("api-root"),
        "/api/portal/timeline/",
    ]
    for url in pages:
        response = client.get(url)
        content = b"".join(response.streaming_content) if response.streaming else response.content
        text = content.decode()
        assert response.status_code == 200, url
        assert "INTERNAL-ONLY" not in text, url
    partial = client.get(reverse("interactions:interaction_list"), headers={"HX-Request": "true"}).content.decode()
    assert shared.summary in partial and "INTERNAL-ONLY" not in partial
    assert client.get(internal.get_absolute_url()).status_code == 404
    assert client.get(reverse("interactions-api:interaction-detail", args=[internal.pk])).status_code == 404
    assert client.get(reverse("interactions:lesson_search")).status_code == 403
    client.force_login(world.lead_a)
    assert "INTERNAL-ONLY" in client.get(reverse("interactions:interaction_list")).content.decode()


@pytest.mark.parametrize("user", ["customer_a", "customer_b", "lead_a", "lead_b", "pm", "staff"])
def test_every_role_on_the_interaction_pages(client, world, shared_and_internal, user):
    shared, internal = shared_and_internal
    expected = {  # (list shows shared, list shows internal, detail of internal, edit of shared)
        "customer_a": (True, False, 404, 403),
        "customer_b": (False, False, 404, 404),
        "lead_a": (True, True, 200, 200),
        "lead_b": (False, False, 404, 404),
        "pm": (True, True, 200, 403),
        "staff": (True, True, 200, 200),
    }[user]
    client.force_login(getattr(world, user))
    page = client.get(reverse("interactions:interaction_list")).content.decode()
    assert (shared.summary in page, "INTERNAL-ONLY" in page) == expected[:2]
    assert client.get(internal.get_absolute_url()).status_code == expected[2]
    assert client.get(reverse("interactions:interaction_edit", args=[shared.pk])).status_code == expected[3]


@pytest.mark.parametrize(("url", "at_most"), [
    (lambda world: world.org_a.get_absolute_url(), None),
    # The lead home also carries the review app's sections (open per organization, launches, new faults: 3 queries)
    # and the idle capacity list of capacity accounting (2), and the badge of organizations left out of the active
    # cycle (1).
    (lambda world: reverse("portal:lead_home"), 15),  # the failed-remediation section: one query
])
def test_pages_listing_interactions_keep_their_query_count(client, world, url, at_most):
    """The interaction list itself: tests/interactions/test_interactions_views.py."""
    tags = list(ChallengeTag.objects.all()[:2])
    client.force_login(world.lead_a)

    def grow(n):
        for _ in range(n):
            InteractionFactory(organization=world.org_a, owner=world.lead_a, tags=tags)

    assert_flat_queries(client, url(world), grow=grow, sizes=(3, 33), at_most=at_most)


def test_suggest_endpoint_refuses_empty_text(client, world):
    client.force_login(world.lead_a)
    assert client.post(reverse("interactions:interaction_suggest_tags"), {"summary": " "}).status_code == 400


@pytest.mark.parametrize("pasted", [
    "case-123456789012-2026-3f2a9c1b7d4e5a60",
    "  case-123456789012-2026-3f2a9c1b7d4e5a60 ",
    "https://support.console.aws.amazon.com/support/home?region=us-east-1#/case/"
    "?caseId=case-123456789012-2026-3f2a9c1b7d4e5a60&displayId=172345678901&language=en",
    "https://support.console.aws.amazon.com/support/home#/case/?caseId=case%2D123456789012%2D2026%2D3f2a9c1b7d4e5a60",
    "Case ID: case-123456789012-2026-3f2a9c1b7d4e5a60 (opened by Kotoba)",
])
def test_support_case_field_takes_the_id_however_it_is_pasted(world, pasted):
    from workloads.interactions.desk.forms import InteractionForm

    form = InteractionForm(data={"organization": world.org_a.pk, "kind": "support_case", "summary": "EFA",
                                 "occurred_at": "2026-11-30T10:00", "status": "open", "severity": "normal",
                                 "visibility": "shared", "support_case_id": pasted}, user=world.lead_a)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["support_case_id"] == "case-123456789012-2026-3f2a9c1b7d4e5a60"


def test_support_case_field_shows_the_format_up_front_and_explains_a_display_id(client, world):
    from workloads.interactions.desk.forms import InteractionForm

    client.force_login(world.lead_a)
    html = client.get(reverse("interactions:interaction_add")).content.decode()
    assert "case-&lt;account&gt;-&lt;year&gt;-&lt;16 characters&gt;" in html  # before any error
    data = {"organization": world.org_a.pk, "kind": "support_case", "summary": "EFA", "occurred_at": "2026-11-30T10:00",
            "status": "open", "severity": "normal", "visibility": "shared"}
    form = InteractionForm(data={**data, "support_case_id": "172345678901"}, user=world.lead_a)
    assert not form.is_valid() and "display id" in str(form.errors["support_case_id"])
    form = InteractionForm(data={**data, "support_case_id": "my case"}, user=world.lead_a)
    assert not form.is_valid() and "No AWS support case id" in str(form.errors["support_case_id"])


def test_tag_suggestions_are_labels_of_the_forms_own_checkboxes(client, world):
    client.force_login(world.lead_a)
    form_html = client.get(reverse("interactions:interaction_add")).content.decode()
    response = client.post(reverse("interactions:interaction_suggest_tags"),
                           {"summary": "NCCL INFO NET/Socket : Using [0]eth0", "body": ""})
    labels = re.findall(r'<label for="(id_tags_\d+)" class="badge tag-suggestion"', response.content.decode())
    assert labels, response.content
    for checkbox_id in labels:
        box = re.search(rf'<input[^>]*id="{checkbox_id}"[^>]*>', form_html).group(0)
        slug = re.search(r'value="([^"]+)"', box).group(1)
        assert slug in [t.slug for t in tagging.suggest("NCCL INFO NET/Socket : Using [0]eth0")]


def test_suggested_tags_on_the_interaction_page_open_the_edit_form_with_the_tag_ticked(client, world):
    obj = InteractionFactory(organization=world.org_a, summary="NCCL INFO NET/Socket : Using [0]eth0", body="")
    suggested = tagging.suggest(obj.summary)[0]
    client.force_login(world.lead_a)
    page = client.get(obj.get_absolute_url()).content.decode()
    link = f"{reverse('interactions:interaction_edit', args=[obj.pk])}?add_tag={suggested.slug}"
    assert f'href="{link}"' in page
    form = client.get(link).content.decode()
    box = re.search(rf'<input[^>]*value="{suggested.slug}"[^>]*>', form).group(0)
    assert "checked" in box
    assert not obj.tags.exists()  # nothing is saved until the lead saves the form
