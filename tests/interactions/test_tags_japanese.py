"""Challenge tags are stored in English and read in the reader's language: the interaction's page, the list and
the suggestions show the curated tags' Japanese names and descriptions on a Japanese page."""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.interactions.factories_interactions import InteractionFactory
from workloads.interactions.models import ChallengeTag
from workloads.interactions.taxonomy import ensure_taxonomy

pytestmark = pytest.mark.django_db


def _ja(client, url):
    client.cookies["portal_language"] = "ja"
    return client.get(url, headers={"Accept-Language": "ja"}).content.decode()


def test_an_interactions_tags_read_japanese(client, world):
    ensure_taxonomy(ChallengeTag)
    interaction = InteractionFactory(organization=world.org_a)
    interaction.tags.set([ChallengeTag.objects.get(slug="efa-networking")])
    client.force_login(world.lead_a)
    detail = _ja(client, reverse("interactions:interaction_detail", kwargs={"pk": interaction.pk}))
    assert "EFA ネットワーク" in detail and ">EFA networking<" not in detail
    # suggested from its text (NET/Socket), with its description as the title
    assert "+ NCCL の設定" in detail and "ソケットへのフォールバック" in detail
    listing = _ja(client, reverse("interactions:interaction_list"))
    assert "EFA ネットワーク" in listing
    assert ChallengeTag.objects.get(slug="nccl-configuration").name == "NCCL configuration"  # stored in English
