"""The demo's report to the funder: a quarterly report over the last thirteen weeks, made, written and issued
through the services as the pages do it. The lead SA's narratives for Kotoba Labs and Shirakawa AI are written in
English and Japanese above the drafts the portal rendered in both languages from the timeline, a Kotoba Labs
engineer commented on the draft, and the program manager issued it: its PDF and workbook download in both
languages. Idempotent."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from portal.review.funder import services
from portal.review.funder.models import FunderReport
from sandbox.program import _user

TITLE = "GENIAC quarterly report to the ministry"
NARRATIVES = {
    "kotoba-labs": (
        "Kotoba Labs pre-trained its 100B Japanese model on P5 through the quarter. Two GPU faults were remediated "
        "with node replacements; the cluster was validated with NCCL tests after each.",
        "Kotoba Labs は四半期を通じて P5 で 100B の日本語モデルを事前学習しました。GPU 障害 2 件はノード交換で"
        "復旧し、その都度 NCCL テストでクラスターを検証しました。"),
    "shirakawa-ai": (
        "Shirakawa AI continued pre-training of Llama 3.1 405B for tourism on HyperPod; its engineers approved "
        "each node remediation the lead SA proposed.",
        "Shirakawa AI は HyperPod で観光向けに Llama 3.1 405B の継続事前学習を行いました。リード SA が提案した"
        "ノード修復はすべてエンジニアが承認しました。"),
}


def seed(context: dict) -> dict:
    if FunderReport.objects.filter(title=TITLE).exists():
        return context
    pm = context["pm"]
    today = timezone.localdate()
    report = services.create(FunderReport(title=TITLE, kind="quarterly", period_start=today - timedelta(days=91),
                                          period_end=today - timedelta(days=1)), pm)
    for part in report.parts.select_related("organization"):
        if part.organization.slug in NARRATIVES:
            english, japanese = NARRATIVES[part.organization.slug]
            drafted_en = f"\n\n{part.narrative}" if part.narrative else ""
            drafted_ja = f"\n\n{part.narrative_ja}" if part.narrative_ja else ""
            part.narrative, part.narrative_ja = english + drafted_en, japanese + drafted_ja
            part._history_user = _user("lead")
            part.save(update_fields=["narrative", "narrative_ja", "updated"])
        if part.organization.slug == "kotoba-labs":
            services.comment(part, _user("kotoba"), "Please mention that the 100B checkpoint passed our evaluation.")
    context["funder_report"] = services.issue(report, pm)
    return context
