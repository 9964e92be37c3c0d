"""The weekly review's tables (the live week and a frozen one render through the same tags) read Japanese on a
Japanese page: durations, the next expiry, the heatmap's challenge names and cell titles."""
from __future__ import annotations

from django.utils import translation

from portal.review.templatetags import review_tables

ORGANIZATION = {"slug": "alpha", "name": "Alpha Labs", "workloads": [], "leads": [], "clusters": {}, "health": "",
                "validation": "", "open": {}, "oldest_open_days": 5, "last_contact": None, "quota_used": 0,
                "quota_total": 0, "expiring": {"count": 2, "next": "2026-12-20"}}
HEAT = {"tag": "nccl-configuration", "name": "NCCL configuration", "total": 3, "previous": 1, "delta": 2,
        "organizations": 1, "cells": [{"organization": "alpha", "count": 3, "previous": 1, "delta": 2, "level": 3}]}


def test_the_review_tables_read_japanese():
    with translation.override("ja"):
        rows = review_tables.organization_rows([ORGANIZATION])
        heat = review_tables.heatmap_rows([HEAT])
        empty = review_tables.organization_rows([])
    assert "5 日" in rows and "2 件（次は 2026-12-20）" in rows and ">なし<" in rows
    assert "NCCL の設定" in heat and 'title="今回 3、前回 1"' in heat
    assert "組織はありません。" in empty
    with translation.override("en"):
        assert "5 d" in review_tables.organization_rows([ORGANIZATION])
