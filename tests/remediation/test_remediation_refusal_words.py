"""A refused action's reason reads in the reader's language (the panel and the action's page), with its detail
written from the parameters the refusal keeps; the stored English stays for the journal and the API."""
from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import translation

from clusters.remediation import refusals, services
from clusters.remediation.models import RemediationAction
from tests.remediation.factories_remediation import FAULTY, RemediationPolicyFactory, faulty_report, hyperpod_cluster

OTHER = "ip-10-1-0-11"


@pytest.mark.django_db
def test_a_refusal_reads_in_japanese_with_its_detail_and_once(world, client):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa", max_nodes=1)
    cluster = hyperpod_cluster(world.org_a, nodes=4, in_endpoint=False)
    faulty_report(cluster, OTHER)
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY, OTHER], actor=world.lead_a)
    assert action.refused_rule == "max_nodes"
    english = ("Refused: too many nodes of the cluster would be in remediation at once (0 in remediation, at most 1 "
               "of 4 nodes at once).")
    assert action.refusal == ("Refused: too many nodes of the cluster would be in remediation at once (0 in "
                              "remediation, at most 1 of 4 at once).")  # stored as before, for the journal and API
    with translation.override("en"):
        assert refusals.shown(action) == english
    japanese = "拒否：同時に修復するクラスターのノードが多すぎます（修復中 0 台、同時に修復できるのは 4 台のうち 1 台まで）。"
    with translation.override("ja"):
        assert refusals.shown(action) == japanese
    client.force_login(world.customer_a)
    client.cookies["django_language"] = "ja"
    panel = client.get(reverse("remediation:cluster_panel", kwargs={"pk": cluster.pk}),
                       headers={"Accept-Language": "ja"}).content.decode()
    page = client.get(action.get_absolute_url(), headers={"Accept-Language": "ja"}).content.decode()
    for html in (panel, page):
        assert japanese in html and "Refused" not in html and "拒否：拒否" not in html


@pytest.mark.django_db
def test_a_refusal_stored_before_its_parameters_shows_its_rule_translated_and_its_detail_as_stored(world):
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    action = RemediationAction.objects.create(
        organization=world.org_a, cluster=cluster, kind="reboot", nodes=[FAULTY], key="old", state="refused",
        refused_rule="cooldown", refusal=f"Refused: the node was remediated too recently ({FAULTY} within 24 h).")
    with translation.override("ja"):
        assert refusals.shown(action) == f"拒否：ノードは直近に修復されたばかりです（{FAULTY} within 24 h）。"
    with translation.override("en"):
        assert refusals.shown(action) == action.refusal
    action.progress = {"refusal": {"rule": "cooldown", "nodes": [FAULTY], "hours": 24}}
    with translation.override("ja"):
        assert refusals.shown(action) == f"拒否：ノードは直近に修復されたばかりです（{FAULTY} は 24 時間以内に修復済み）。"


@pytest.mark.django_db
def test_a_declined_action_reads_the_customers_words_in_the_readers_sentence(world):
    RemediationPolicyFactory(organization=world.org_a, mode="approval")
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    action = services.decline(action, world.customer_a, "training run until Friday")
    with translation.override("ja"):
        assert refusals.shown(action) == "拒否：カスタマーエンジニアが却下しました（training run until Friday）。"
    with translation.override("en"):
        assert refusals.shown(action) == action.refusal == (
            "Refused: a customer engineer declined it (training run until Friday).")
