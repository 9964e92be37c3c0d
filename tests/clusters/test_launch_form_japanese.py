"""The launch form's help texts (each blueprint parameter's description) read Japanese on a Japanese page, and
every description the blueprints carry has its Japanese in the catalogue."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from clusters.blueprints import cfn
from clusters.launches import descriptions
from tests.catalogue import parse


def test_every_blueprint_description_is_listed_and_has_japanese():
    written = {spec.description for path in sorted(Path(cfn.BLUEPRINTS_DIR).glob("*.yaml"))
               for spec in cfn.parameters(cfn.load(path)) if spec.description}
    assert len(written) > 60
    assert sorted(written - set(descriptions.DESCRIPTIONS)) == []
    _fields, entries = parse()
    translated = {e.msgid for e in entries if e.msgstr}
    assert sorted(written - translated) == []


@pytest.mark.django_db
@pytest.mark.usefixtures("quotas")
def test_the_launch_forms_help_reads_japanese(client, world):
    client.force_login(world.lead_a)
    client.cookies["portal_language"] = "ja"
    for slug, english, japanese in (
            ("parallelcluster", "Instance type of the head node.", "ヘッドノードのインスタンスタイプ。"),
            ("hyperpod", "Number of worker instances.", "ワーカーインスタンスの台数。")):
        html = client.get(reverse("clusters:launch", kwargs={"slug": slug}),
                          headers={"Accept-Language": "ja"}).content.decode()
        assert japanese in html and english not in html, slug
