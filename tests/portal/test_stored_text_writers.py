"""Every writer of the organization's timeline and of an interaction's history stores what it says as a code with
parameters, never a sentence in one language: interactions, escalations, NCCL validation, health faults, node
health reasons, enablement sessions, remediation consent and calls for applications. Each reader reads the same row
in their language; its English stays in the text column (API, search, exports)."""
from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import translation

from portal.core.models import TimelineEntry
from tests.calls.conftest import program  # noqa: F401, F811 - the calls' fixture

pytestmark = pytest.mark.django_db


def entries(org, code_prefix: str) -> list[TimelineEntry]:
    return list(TimelineEntry.objects.filter(organization=org, title_code__startswith=code_prefix).order_by("pk"))


def read(entry: TimelineEntry, language: str) -> tuple[str, str]:
    with translation.override(language):
        fresh = TimelineEntry.objects.get(pk=entry.pk)
        return fresh.shown_title, fresh.shown_body


def timeline_page(client, user, org, language: str) -> str:
    client.force_login(user)
    return client.get(reverse("portal:timeline", args=[org.slug]), HTTP_ACCEPT_LANGUAGE=language).content.decode()


# --- interactions and escalations ------------------------------------------------------------------------------


def test_an_interaction_logged_and_moved_is_stored_as_codes_and_read_in_each_language(world, client):
    from portal.core.choices import InteractionStatus
    from tests.interactions.factories_interactions import InteractionFactory
    from workloads.interactions import services
    from workloads.interactions.models import InteractionComment

    interaction = InteractionFactory(organization=world.org_a, kind="meeting", summary="EFA tuning review",
                                     status=InteractionStatus.OPEN)
    with translation.override("ja"):  # a lead SA reading Japanese writes the row: it stays codes and English
        services.created(interaction, world.lead_a)
        before = services.snapshot(interaction)
        interaction.status, interaction.visibility = InteractionStatus.WAITING_AWS, "internal"
        interaction.save()
        services.changed(interaction, before, world.lead_a)
    logged, moved = entries(world.org_a, "interaction.")
    assert (logged.title_code, logged.title) == ("interaction.logged", "Meeting: EFA tuning review")
    assert (moved.title_code, moved.title) == ("interaction.status_changed", "EFA tuning review: Open → Waiting on AWS")
    assert moved.params["before"] == "open" and moved.params["after"] == "waiting_aws"  # codes, not words
    assert read(logged, "ja")[0] == "ミーティング: EFA tuning review"
    assert read(moved, "ja")[0] == "EFA tuning review: 未解決 → AWS の回答待ち"
    history = {h.kind: h for h in InteractionComment.objects.filter(interaction=interaction)}
    assert (history["status"].old_value, history["status"].new_value) == ("Open", "Waiting on AWS")  # English kept
    note = InteractionComment.objects.get(interaction=interaction, body_code="interaction.visibility_changed")
    assert note.body == "Visibility changed to Internal."
    with translation.override("ja"):
        assert (history["status"].shown_old_value, history["status"].shown_new_value) == ("未解決", "AWS の回答待ち")
        assert note.shown_body == "公開範囲を「社内限定」に変更しました。"
    with translation.override("en"):
        assert history["status"].shown_new_value == "Waiting on AWS" and note.shown_body == note.body
    client.force_login(world.lead_a)
    page = client.get(interaction.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert "Waiting on AWS" not in page and "Visibility changed to" not in page and "公開範囲を" in page
    english = client.get(interaction.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Open → Waiting on AWS" in english and "Visibility changed to Internal." in english


def test_the_support_case_opened_note_reads_in_each_language(world):
    from portal.core.stored_text import message
    from tests.interactions.factories_interactions import InteractionFactory
    from workloads.interactions import timeline_texts
    from workloads.interactions.models import InteractionComment

    said = message(timeline_texts.CASE_OPENED, case="case-123456789012-2026-abcdefgh12345678", subject="GPU lost")
    row = InteractionComment.objects.create(interaction=InteractionFactory(organization=world.org_a), internal=True,
                                            body=said.english(), body_code=said.code, params=said.params)
    assert row.body == "Opened AWS Support case case-123456789012-2026-abcdefgh12345678: GPU lost"
    with translation.override("ja"):
        assert row.shown_body.startswith("AWS サポートケース case-123456789012") and row.shown_body.endswith("GPU lost")
    old = InteractionComment.objects.create(interaction=row.interaction, body="Typed by a lead SA")
    with translation.override("ja"):
        assert old.shown_body == "Typed by a lead SA"


def test_an_escalation_raised_and_moved_reads_in_each_language(world):
    from portal.engagement import services
    from tests.engagement.factories_engagement import specialist, target
    from tests.interactions.factories_interactions import InteractionFactory
    from workloads.interactions.models import InteractionComment

    team = specialist("fw_specialist_codes", "frameworks")
    interaction = InteractionFactory(organization=world.org_a, visibility="shared", summary="Slow all_reduce")
    with translation.override("ja"):
        escalation = services.raise_escalation(interaction, world.lead_a, target("frameworks"), "Why 30 GB/s?")
        services.transition(escalation, team, "accept")
    raised, accepted = entries(world.org_a, "escalation.")
    assert raised.title.startswith("Escalated to ") and raised.title.endswith(": Slow all_reduce")
    assert accepted.params["state"] == "accepted" and " accepted: Slow all_reduce" in accepted.title
    for entry in (raised, accepted):
        ja = read(entry, "ja")[0]
        assert "エスカレーション" in ja and "Escalat" not in ja and "Slow all_reduce" in ja
    state = InteractionComment.objects.filter(interaction=interaction, kind="escalation").latest("pk")
    assert state.new_value.endswith(" · Accepted")  # English kept
    with translation.override("ja"):
        assert not state.shown_new_value.endswith("Accepted")


# --- NCCL validation ------------------------------------------------------------------------------------------


def _job(cluster, **fields):
    from clusters.health.models import ValidationJob

    return ValidationJob.objects.create(cluster=cluster, key=f"k-{cluster.pk}-{fields.get('mode', 'c')}",
                                        upload_base="http://portal.invalid", state="submitted", **fields)


def test_a_pairwise_sweep_finished_and_a_job_timed_out_read_in_each_language(world, client):
    from clusters.health.validation import service as validation
    from tests.health.factories_health import ClusterFactory

    cluster = ClusterFactory(organization=world.org_a, name="val-codes")
    pairs = [{"hosts": ["n1", "n2"], "busbw": 20.0}, {"hosts": ["n1", "n3"], "busbw": 21.0},
             {"hosts": ["n2", "n3"], "busbw": 380.0}, {"hosts": ["n2", "n4"], "busbw": 381.0},
             {"hosts": ["n3", "n4"], "busbw": 379.5}]
    job = _job(cluster, mode="pairwise", pairs=pairs)
    with translation.override("ja"):
        validation._finish(job)
        validation.fail(_job(cluster, mode="collectives", collectives=["all_reduce"]), "boom", "no_report",
                        state="timed_out")
    done, timed_out = entries(world.org_a, "validation.")
    assert done.title == "val-codes: NCCL validation (pairwise sweep) failed"
    assert done.body.startswith("Slow node: n1. n1 is in every slow pair (2 of 5 pairs more than")
    ja_title, ja_body = read(done, "ja")
    assert ja_title == "val-codes: NCCL 検証（ペアごとの総当たり）が不合格でした"
    assert ja_body.startswith("遅いノード: n1。遅いペアのすべてに n1 が含まれます（5 ペア中 2 ペア") and "GB/s" in ja_body
    assert timed_out.title == "val-codes: NCCL validation timed out" and timed_out.params["reason"] == "no_report"
    assert read(timed_out, "ja")[0] == "val-codes: NCCL 検証が時間切れになりました"
    assert read(timed_out, "en") == (timed_out.title, timed_out.body)
    page = timeline_page(client, world.lead_a, world.org_a, "ja")
    assert "NCCL 検証（ペアごとの総当たり）が不合格でした" in page and "pairwise sweep" not in page
    assert read(timed_out, "ja")[1].startswith("検証ジョブが期限までに結果を報告しませんでした")
    # The job's own page: its summary written from its facts in the reader's language, English kept on the row.
    job.refresh_from_db()
    assert job.summary.startswith("Slow node: n1. n1 is in every slow pair")
    ja_page = client.get(job.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert "遅いノード: n1。遅いペアのすべてに n1 が含まれます" in ja_page and "Slow node: n1. n1 is" not in ja_page
    en_page = client.get(job.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert job.summary in en_page.replace("&#x27;", "'")
    client.force_login(world.customer_a)  # a customer reads the portal's words for the failure, in Japanese
    customer = client.get(timed_out.source.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert "検証ジョブが期限までに結果を報告しませんでした" in customer and "never reported" not in customer


def test_collective_findings_write_numbers_for_the_reader(world):
    from clusters.health.models import ValidationRun
    from clusters.health.validation import service as validation
    from tests.health.factories_health import ClusterFactory

    cluster = ClusterFactory(organization=world.org_a, name="val-coll")
    job = _job(cluster, mode="collectives", collectives=["all_reduce"])
    ValidationRun.objects.create(cluster=cluster, job=job, collective="all_reduce", nodes=2, verdict="pass",
                                 plateau_busbw=1234.56, expected_busbw=1200.0, result={}, rows=[])
    validation._finish(job)
    (done,) = entries(world.org_a, "validation.passed")
    assert done.body == "all_reduce: pass, plateau 1,234.6 GB/s (expected 1,200)"
    assert read(done, "ja")[1] == "all_reduce: 合格、到達帯域 1,234.6 GB/s（期待値 1,200）"


# --- health: critical faults and node reasons ------------------------------------------------------------------


def test_critical_faults_and_node_reasons_are_codes_read_in_each_language(world, client):
    from clusters.health.ingest import service as services
    from clusters.health.models import NodeHealth
    from tests.health.factories_health import ClusterFactory, sample

    cluster = ClusterFactory(organization=world.org_a, name="hc-codes")
    with translation.override("ja"):
        services.ingest(cluster, sample("dcgm_p5_xid79_missing_gpu.prom"), "push")
    (found,) = TimelineEntry.objects.filter(organization=world.org_a, title_code__startswith="health.critical")
    assert found.title == "hc-codes: ip-10-1-45-13 GPU not reported by dcgm-exporter and 1 more"
    assert "XID 79: GPU has fallen off the bus" in found.body and len(found.body.splitlines()) == 2
    ja_title, ja_body = read(found, "ja")
    assert ja_title == "hc-codes: ip-10-1-45-13 dcgm-exporter が GPU を報告していません ほか 1 件"
    assert "fallen off the bus" not in ja_body and "XID 79: " in ja_body and len(ja_body.splitlines()) == 2
    node = NodeHealth.objects.filter(cluster=cluster).exclude(reasons=[]).first()
    assert all(isinstance(r, dict) and r["code"] for r in node.reasons)  # codes with parameters, not English
    client.force_login(world.lead_a)
    url = reverse("health:cluster_health", kwargs={"pk": cluster.pk})
    ja = client.get(url, HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    en = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "GPU has fallen off the bus" in en and "GPU has fallen off the bus" not in ja
    assert "{&#x27;code&#x27;" not in ja and "&#x27;params&#x27;" not in en
    from clusters.health.api.serializers import NodeHealthSerializer

    with translation.override("ja"):  # the API keeps English lines
        lines = NodeHealthSerializer(node).data["reasons"]
    assert lines and all(isinstance(line, str) for line in lines) and any("GPU " in line for line in lines)


def test_valued_fault_words_keep_their_value_in_the_readers_numbers():
    from portal.core.templatetags.portal_display import stored_words

    with translation.override("ja"):
        assert stored_words("2 of 32 EFA devices reported") == "EFA デバイスの報告は 32 台中 2 台です"
        assert stored_words("rx_drops grew by 12345 since the last report") == (
            "rx_drops が前回の報告から 12,345 増えました")
        assert stored_words("XID 79: GPU has fallen off the bus") != "XID 79: GPU has fallen off the bus"
    with translation.override("en"):
        assert stored_words("rx_drops grew by 1234567 since the last report") == (
            "rx_drops grew by 1,234,567 since the last report")
        assert stored_words("2 of 32 EFA devices reported") == "2 of 32 EFA devices reported"


def test_a_node_reason_is_a_code_with_its_values():
    from clusters.health.readers import reason_texts
    from clusters.health.readers.summary import summarize
    from tests.health.factories_health import sample

    summary = summarize(sample("dcgm_p5_xid79_missing_gpu.prom"), "p5.48xlarge")
    reasons = [r for node in summary.nodes for r in node.reasons]
    assert reasons and all(r["code"] for r in reasons)
    with translation.override("en"):
        english = [reason_texts.shown(r) for r in reasons]
    assert any(line.startswith("GPU ") and "XID 79: GPU has fallen off the bus (" in line for line in english)
    with translation.override("ja"):
        japanese = [reason_texts.shown(r) for r in reasons]
    assert japanese != english and not any("fallen off the bus" in line for line in japanese)
    assert reason_texts.shown("GPU 1: an older row's English") == "GPU 1: an older row's English"


# --- enablement, consent, calls -------------------------------------------------------------------------------


def test_an_enablement_session_reads_in_each_language(world, client):
    from portal.core import timeline
    from portal.core.stored_text import message
    from workloads.enablement.timeline_texts import SESSION

    timeline.record(world.org_a, "enablement", message(SESSION, kind="workshop", topic="FSx for Lustre"))
    (entry,) = entries(world.org_a, "enablement.")
    assert entry.title == "Workshop: FSx for Lustre" and entry.params["kind"] == "workshop"
    assert read(entry, "ja")[0] == "ワークショップ: FSx for Lustre"


def test_the_enablement_page_writes_the_session_as_a_code(world, client):
    from workloads.enablement.models import EnablementSession

    client.force_login(world.pm)
    url = reverse("enablement:enablement_add")
    response = client.post(url, {"kind": "workshop", "topic": "EFA deep dive", "date": "2026-12-01",
                                 "audience": [world.org_a.pk]}, HTTP_ACCEPT_LANGUAGE="ja")
    assert response.status_code == 302, response.content.decode()[:2000]
    assert EnablementSession.objects.filter(topic="EFA deep dive").exists()
    (entry,) = entries(world.org_a, "enablement.")
    assert entry.title == "Workshop: EFA deep dive" and entry.title_code == "enablement.session"
    assert "ワークショップ: EFA deep dive" in timeline_page(client, world.customer_a, world.org_a, "ja")


def test_a_consent_change_proposed_and_approved_reads_in_each_language(world):
    from clusters.remediation import consent

    with translation.override("ja"):
        policy, change = consent.save(world.org_a, {"mode": "lead_sa", "automatic_kinds": [], "max_nodes": 1,
                                                    "cooldown_hours": 24}, world.lead_a)
    assert change is not None and change.widens == ["consent approval → lead_sa"]  # English on the row
    (proposed,) = entries(world.org_a, "consent.")
    assert proposed.title.startswith("Remediation consent change proposed by ")
    assert proposed.body == "Widens: consent approval → lead_sa."
    ja_title, ja_body = read(proposed, "ja")
    assert "修復の同意の変更を提案しました" in ja_title and ja_body == "広がる範囲: 同意 approval → lead_sa。"
    assert read(proposed, "en") == (proposed.title, proposed.body)


def test_a_call_application_started_submitted_and_awarded_reads_in_each_language(world, program):  # noqa: F811
    from tests.calls.conftest import line

    with translation.override("ja"):
        program.apply(world.org_a, world.lead_a, [line(4)])
    started, submitted = entries(world.org_a, "call.")
    assert started.title == "Application to Call for cycle 8 started"
    assert submitted.title == "Application to Call for cycle 8 submitted (version 1)"
    assert read(started, "ja")[0] != started.title and "Call for cycle 8" in read(started, "ja")[0]
    from portal.core.stored_text import message
    from portal.engagement.calls import timeline_texts

    awarded = message(timeline_texts.AWARDED, call="Call for cycle 8", hours=21504)
    assert awarded.english() == "Call for cycle 8: awarded 21,504 accelerator-hours for the next cycle"
    with translation.override("ja"):
        assert "21,504" in str(awarded) and "awarded" not in str(awarded)


def test_entries_written_before_codes_show_what_was_stored(world, client):
    from portal.core import timeline

    timeline.record(world.org_a, "validation", "c1: NCCL validation (all_reduce) passed")
    page = timeline_page(client, world.lead_a, world.org_a, "ja")
    assert "c1: NCCL validation (all_reduce) passed" in page
