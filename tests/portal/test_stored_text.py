"""Text the portal writes itself is stored as a code with parameters and written in the reader's language when
shown; its English stays in the old text column (API, search, CSV), and rows written before codes show as stored."""
from __future__ import annotations

from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext_noop

from portal.core import stored_text, timeline
from portal.core.models import TimelineEntry
from portal.core.stored_text import message

GREETING = stored_text.define("test.greeting", gettext_noop("Found the nodes in HyperPod: %(found)s."))
PAIR = stored_text.define("test.pair", gettext_noop("%(host)s is %(node)s"))
MORE = stored_text.define("test.more", gettext_noop("%(names)s and %(more)s more"))
STATE = stored_text.define("test.state", gettext_noop("Cluster %(name)s: %(before)s → %(after)s"),
                           {"before": str.upper, "after": str.upper})


def test_a_message_renders_in_the_active_language_with_nested_messages_lists_and_labels():
    said = message(GREETING, found=[message(PAIR, host="ip-1", node="i-1"), message(PAIR, host="ip-2", node="i-2")])
    assert said.params == {"found": [{"code": PAIR, "params": {"host": "ip-1", "node": "i-1"}},
                                     {"code": PAIR, "params": {"host": "ip-2", "node": "i-2"}}]}  # JSON
    assert said.english() == "Found the nodes in HyperPod: ip-1 is i-1, ip-2 is i-2."
    with translation.override("ja"):
        assert str(said) == "HyperPod でノードを確認しました: ip-1 は i-1, ip-2 は i-2。"
        assert said.english().startswith("Found the nodes")  # what is stored is English whatever the request
        assert str(message(MORE, names=["a", "b"], more=3)) == "a, b ほか 3 件"
    assert str(message(STATE, name="c1", before="creating", after="ready")) == "Cluster c1: CREATING → READY"


def test_an_unknown_code_or_a_row_without_one_shows_what_was_stored():
    assert stored_text.render("", {}, "Quota change approved") == "Quota change approved"
    assert stored_text.render("gone.in.this.release", {"x": 1}, "Old words") == "Old words"
    assert stored_text.render(GREETING, {"other": 1}, "Stored") == "Stored"  # another release's parameters


def test_a_message_is_defined_once():
    import pytest

    stored_text.define("test.once", "One")
    stored_text.define("test.once", "One")  # the same words again: a module imported twice
    with pytest.raises(ValueError):
        stored_text.define("test.once", "Two")


def test_the_timeline_stores_codes_and_shows_each_reader_their_language(world, client):
    said = message(GREETING, found=[message(PAIR, host="ip-1", node="i-1")])
    entry = timeline.record(world.org_a, "fault", said, body=message(MORE, names=["x"], more=2))
    entry.refresh_from_db()
    assert (entry.title, entry.body) == ("Found the nodes in HyperPod: ip-1 is i-1.", "x and 2 more")
    assert (entry.title_code, entry.body_code) == (GREETING, MORE)
    old = timeline.record(world.org_a, "note", "Typed by a person: そのまま")
    assert (old.title_code, old.params) == ("", {})
    client.force_login(world.lead_a)
    url = reverse("portal:timeline", args=[world.org_a.slug])
    japanese = client.get(url, HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert "HyperPod でノードを確認しました: ip-1 は i-1。" in japanese and "x ほか 2 件" in japanese
    assert "Found the nodes" not in japanese and "Typed by a person: そのまま" in japanese
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Found the nodes in HyperPod: ip-1 is i-1." in english and "x and 2 more" in english
    with translation.override("ja"):
        assert TimelineEntry.objects.get(pk=entry.pk).shown_title.startswith("HyperPod")


def test_a_cluster_state_change_reads_in_each_language(world):
    from tests.health.factories_health import ClusterFactory

    cluster = ClusterFactory(organization=world.org_a, name="c9", state="creating")
    cluster.transition("failed", error="boom", reason="access_denied")
    entry = TimelineEntry.objects.filter(organization=world.org_a, title_code="cluster.state_changed").latest("id")
    assert entry.title == "Cluster c9: creating → failed"
    with translation.override("ja"):
        assert "c9" in entry.shown_title and "creating" not in entry.shown_title and "failed" not in entry.shown_title
        assert entry.shown_body and entry.shown_body != entry.body  # the failure in the reader's words


def test_quota_requests_and_expiries_read_in_each_language_and_approved_is_a_state():
    import datetime
    from types import SimpleNamespace

    from workloads import timeline_texts

    req = SimpleNamespace(quota_id=None, requested_count=4, instance_type_name="p5.48xlarge", region="us-east-1",
                          start=datetime.date(2026, 12, 1), end=datetime.date(2027, 1, 31), status="approved")
    said = message(timeline_texts.DECIDED, status="approved", what=timeline_texts.describe(req))
    assert said.english() == "Quota change approved: new quota of 4 × p5.48xlarge in us-east-1 (2026-12-01 → 2027-01-31)"
    with translation.override("ja"):
        assert str(said) == ("クォータ変更（承認済み）: us-east-1 の p5.48xlarge × 4 の新しいクォータ"
                             "（2026-12-01 → 2027-01-31）")  # a state, never "承認日時" (approved at)
        assert str(timeline_texts.ends_in("reservation", 1, "cr-1")) == "キャパシティ予約の終了まであと 1 日: cr-1"
    assert timeline_texts.ends_in("quota", 1, "q").english() == "Quota ends in 1 day: q"
    assert timeline_texts.ends_in("quota", 3, "q").english() == "Quota ends in 3 days: q"


def test_a_milestone_reached_reads_in_each_language(world):
    import datetime

    from portal.engagement import outcomes
    from portal.engagement.choices import MilestoneKind

    kind = MilestoneKind.values[0]
    assert outcomes.save_milestones(world.org_a, world.lead_a, {kind: datetime.date(2026, 12, 1)}) == [
        str(MilestoneKind(kind).label)]
    entry = TimelineEntry.objects.get(organization=world.org_a, title_code="outcomes.milestone_reached")
    assert entry.title == f"Milestone reached: {MilestoneKind(kind).label}"
    with translation.override("ja"):
        assert entry.shown_title.startswith("マイルストーン達成: ") and entry.shown_title != entry.title
