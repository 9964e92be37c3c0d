"""The admin names every model as a person would: "Remediation policies", not "Remediation policys"; "GPU faults",
not "Gpu faults"."""
from __future__ import annotations

import re

from django.contrib import admin

ACRONYMS = re.compile(r"\b(gpu|aws|efa|nccl|xid|api|sns)\b", re.IGNORECASE)


def test_every_admin_model_has_a_proper_plural_and_its_acronyms_in_capitals():
    wrong = []
    for model in admin.site._registry:
        plural = str(model._meta.verbose_name_plural)
        if re.search(r"[^aeiou]ys\b", plural) or any(m.group() != m.group().upper() for m in ACRONYMS.finditer(plural)):
            wrong.append(plural)
    assert wrong == []
