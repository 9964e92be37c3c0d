"""The report's figures read as people read numbers: money and hours grouped, goodput as a share, nothing raw
(``4172404.78``) in either language."""
from __future__ import annotations

from django.template.loader import render_to_string
from django.utils import translation

FIGURES = {"gpu_hours_reserved": 120000.4, "gpu_hours_held": 90000, "gpu_hours_healthy": 80000, "gpu_hours_busy": 50000,
           "goodput": 0.5912, "cost_usd": 4172404.78, "cost_from": "2026-11-09", "cost_to": "2026-12-06",
           "faults": 3, "critical": 1, "fault_to_healthy_hours": 3.456}


def test_the_funder_figures_format_money_shares_and_hours_in_both_languages():
    for language in ("en", "ja"):
        with translation.override(language):
            html = render_to_string("funder/htmx/figures.html", {"f": FIGURES})
        assert "4,172,404.78" in html and "4172404.78" not in html, language
        assert "59 %" in html and "0.5912" not in html, language
        assert "3.5" in html and "3.456" not in html, language
    with translation.override("ja"):
        empty = render_to_string("funder/htmx/figures.html", {"f": {}})
    assert "None" not in empty and "—" in empty
