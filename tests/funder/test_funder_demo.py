"""The demo holds an issued quarterly report to the funder, with narratives in both languages, whose PDF and
workbook download in English and Japanese."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from portal.core.models import User
from portal.review.funder import services
from portal.review.funder.models import FunderReport
from sandbox.funder import TITLE

pytestmark = pytest.mark.world_per_test


def test_the_demo_holds_an_issued_quarterly_report_in_both_languages(db):
    call_command("seed_demo")
    call_command("seed_demo")
    report = FunderReport.objects.get(title=TITLE)
    assert (report.kind, report.status) == ("quarterly", "issued") and services.intact(report)
    kotoba = report.figures["narratives"]["kotoba-labs"]
    assert kotoba["en"].startswith("Kotoba Labs pre-trained") and kotoba["ja"].startswith("Kotoba Labs は")
    assert len(report.figures["organizations"]) == report.parts.count() >= 12
    assert report.figures["program"]["gpu_hours_held"] > 0
    client = Client()
    client.force_login(User.objects.get(username="pm"))
    for lang in ("en", "ja"):
        for route in ("funder:report_pdf", "funder:report_xlsx"):
            response = client.get(reverse(route, kwargs={"pk": report.pk}), {"lang": lang})
            assert response.status_code == 200 and len(response.content) > 2000
    page = client.get(reverse("funder:report_detail", kwargs={"pk": report.pk}))
    assert report.content_hash in page.content.decode()
