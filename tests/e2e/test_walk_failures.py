"""The walk through what goes wrong, in English and in Japanese, on a phone (390 px) and a desktop (1440 px):

- a failed remediation: the customer reads on the cluster's health page, in the page's language, what failed and
  what happens next; the faults read open again (not "remediating"); a refused retry reads "Refused: …" once; the
  lead SA's home shows the failed action first;
- a pairwise sweep refused: the lead SA starts one from the health page's form on a cluster without health reports
  and the panel shows the refusal (htmx swaps no 400, so before it showed nothing).

On each page: nothing scrolls sideways, no two elements share an id, and each table is in a region that scrolls
sideways on a narrow screen with its hostnames kept whole."""
from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from clusters.remediation import failure, refusals, rules, services
from clusters.remediation.choices import ActionState
from tests.e2e.conftest import LOCALES, SHOTS, sign_in
from tests.health.factories_health import ClusterFactory
from tests.remediation.factories_remediation import RemediationPolicyFactory, faulty_report, hyperpod_cluster
from tests.remediation.test_remediation import run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1440, "height": 900}}
STRANGER = "ip-10-1-0-99"  # reported to the portal, unknown to HyperPod: the reboot fails before touching it
SETTLED = "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .lazy-panel')"
# Words a Japanese page may keep in Latin letters: names of products, units and codes (hostnames are removed first).
LATIN_KEPT = {"XID", "GPU", "GPUs", "SA", "AWS", "EC2", "HyperPod", "Slurm", "NCCL", "EFA", "UTC", "nvidia-smi",
              "sbatch", "nccl-tests", "nccom-test", "Trainium", "ParallelCluster", "all_reduce", "all_gather",
              "reduce_scatter", "alltoall", "broadcast", "PCIe", "NVLink", "DCGM", "ECC", "EKS", "SageMaker",
              "BatchRebootClusterNodes", "BatchReplaceClusterNodes", "dcgm-exporter", "modelName"}


def _in(language: str, text: str, **params) -> str:
    with translation.override(language):
        words = gettext(text)
    return words % params if params else words


def _open(browser, live_server, user: str, language: str, viewport: str):
    context = browser.new_context(viewport=VIEWPORTS[viewport], locale=LOCALES[language])
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    sign_in(page, live_server, user)
    return context, page


def _go(page, live_server, path: str, language: str) -> None:
    response = page.goto(f"{live_server.url}{path}")
    assert response.status == 200, (path, response.status)
    page.wait_for_function(SETTLED, timeout=60000)  # the panels htmx loads have arrived
    assert page.locator("html").get_attribute("lang") == language


def _layout_problems(page) -> list[str]:
    """Sideways scrolling, shared ids, tables outside a sideways-scrolling region, hostnames broken mid-word."""
    problems = []
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    if overflow > 1:
        wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1
                         && !e.closest('details:not([open]), .overflow-auto'))
            .slice(0, 3).map(e => e.tagName + ' ' + e.textContent.trim().slice(0, 40))""")
        problems.append(f"scrolls sideways by {overflow}px: {wide}")
    shared = page.evaluate("""() => { const seen = {};
        document.querySelectorAll('[id]').forEach(e => { seen[e.id] = (seen[e.id] || 0) + 1; });
        return Object.keys(seen).filter(k => seen[k] > 1); }""")
    if shared:
        problems.append(f"ids used twice: {shared}")
    loose = page.evaluate("""() => [...document.querySelectorAll('main table')]
        .filter(t => !t.closest('.overflow-auto')).map(t => (t.caption || t).textContent.trim().slice(0, 40))""")
    if loose:
        problems.append(f"tables that cannot scroll sideways: {loose}")
    broken = page.evaluate("""() => [...document.querySelectorAll('main td')]
        .filter(td => /^ip-[0-9-]+$/.test(td.textContent.trim()))
        .filter(td => { const r = document.createRange(); r.selectNodeContents(td);
                        return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size > 1; })
        .map(td => td.textContent.trim())""")
    if broken:
        problems.append(f"hostnames broken across lines: {broken}")
    labels = page.evaluate("""() => [...document.querySelectorAll('label[for]')]
        .filter(l => !document.getElementById(l.htmlFor)).map(l => l.htmlFor)""")
    if labels:
        problems.append(f"labels pointing at nothing: {labels}")
    return problems


def _english_left(text: str) -> list[str]:
    """Latin words of two letters or more left in a Japanese text once hostnames, cluster names, the people's
    usernames and kept names are removed."""
    text = re.sub(r"\bip-[0-9-]+\b|\b[\w-]+-[\w-]+\b", " ", text)  # hostnames and cluster names
    text = re.sub(r"\b(customer|lead)_[ab]\b", " ", text)
    return sorted({w for w in re.findall(r"[A-Za-z][A-Za-z_]+", text) if w not in LATIN_KEPT})


def _shot(page, language: str, viewport: str, name: str) -> None:
    out = SHOTS / "walk"
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / f"{language}-{viewport}-{name}.png"), full_page=True)


@pytest.fixture
def failed_action(world, aws):
    """A reboot that failed on a HyperPod cluster of organization A before it touched its node, then a retry
    refused by a guardrail (two nodes where one at a time is allowed)."""
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa", cooldown_hours=24)
    cluster = hyperpod_cluster(world.org_a, name="hp-walk", nodes=1)
    faulty_report(cluster, STRANGER)
    action, _ = services.propose(cluster, kind="reboot", nodes=[STRANGER], actor=world.lead_a)
    action = run(action)
    assert (action.state, action.failure_reason) == (ActionState.FAILED, "node_not_found"), action.error
    retry, _ = services.propose(cluster, kind="reboot", nodes=[STRANGER, "ip-10-1-0-10"], actor=world.lead_a)
    assert retry.refused_rule == "max_nodes", retry.refusal
    return action, retry


@pytest.mark.parametrize("language", LOCALES)
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_failed_remediation_reads_in_plain_words(browser, live_server, world, failed_action, language, viewport):
    action, retry = failed_action
    cluster = action.cluster
    with translation.override(language):
        told = failure.told(action)
        what_failed = str(failure.WHAT_FAILED["node_not_found"])
        refused = refusals.shown(retry)
        refused_once = gettext("Refused: %(why)s.") % {"why": gettext(rules.RULE_WORDS["max_nodes"])}
    then = _in(language, "The node was not touched: its faults are open again, and your lead SA can propose the "
                         "action again now.")
    assert what_failed in told and then in told
    failures = {}

    context, page = _open(browser, live_server, "customer_a", language, viewport)
    _go(page, live_server, reverse("health:cluster_health", kwargs={"pk": cluster.pk}), language)
    _shot(page, language, viewport, "failed-remediation-health")
    panel = page.locator("#remediation-panel")
    assert panel.is_visible()
    text = panel.inner_text()
    assert told in text, text  # what failed and what happens next, in the page's language
    assert "NotFound" not in text and "ResourceNotFound" not in text  # the provider's answer is for lead SAs
    # The faults are open again: none reads "remediating", on the panel or on the faults table.
    statuses = panel.locator("table").first.locator("tbody tr td:last-child").all_inner_texts()
    assert statuses and set(statuses) == {_in(language, "open")}, statuses
    assert page.locator("main a.badge[href*='remediation']").count() == 0
    assert panel.locator("table").first.locator(".badge").count() == 0  # no "remediating" badge
    # A refused retry reads its refusal once, in the page's language.
    assert refused in text and refused.startswith(refused_once[:-1]), (refused, text)
    assert "Refused: Refused" not in text and "拒否：拒否" not in text
    assert "Refused" not in text or language == "en"
    for key in ("Remediation", "Open faults and the recommended action", "Actions on this cluster"):
        assert _in(language, key) in text, key
    if language == "ja":
        assert not _english_left(text), _english_left(text)
    failures["customer health"] = _layout_problems(page)

    _go(page, live_server, action.get_absolute_url(), language)
    _shot(page, language, viewport, "failed-remediation-action")
    main = page.locator("main").inner_text()
    assert told in main and _in(language, "Open again") in main, main
    if language == "ja":
        assert not _english_left(main), _english_left(main)
    failures["customer action"] = _layout_problems(page)
    assert not page.console_errors, page.console_errors
    context.close()

    context, page = _open(browser, live_server, "lead_a", language, viewport)
    _go(page, live_server, reverse("portal:lead_home"), language)
    _shot(page, language, viewport, "failed-remediation-lead-home")
    first = page.locator("main section").first
    with translation.override(language):
        heading = translation.ngettext("Failed remediation (%(days)s day)", "Failed remediation (%(days)s days)",
                                       7) % {"days": 7}
    assert first.locator("h2").inner_text() == heading  # where the lead SA looks first
    assert told in first.inner_text() and first.get_by_role("link", name=cluster.name).is_visible()
    failures["lead home"] = _layout_problems(page)
    assert not page.console_errors, page.console_errors
    context.close()
    failures = {k: v for k, v in failures.items() if v}
    assert not failures, json.dumps(failures, indent=1, ensure_ascii=False)


@pytest.mark.parametrize("language", LOCALES)
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_refused_pairwise_sweep_is_shown(browser, live_server, world, language, viewport):
    from clusters.health.models import ValidationJob

    cluster = ClusterFactory(organization=world.org_a, name="pc-no-reports")  # ParallelCluster, ready, no report
    refusal = _in(language, "A pairwise sweep needs at least two nodes (the portal knows the nodes from the "
                            "cluster's health reports).")
    context, page = _open(browser, live_server, "lead_a", language, viewport)
    _go(page, live_server, reverse("health:cluster_health", kwargs={"pk": cluster.pk}), language)
    panel = page.locator("#validation-panel")
    panel.locator("summary", has_text=_in(language, "Start a validation")).click()
    panel.locator("input[name=pairwise]").check()
    with page.expect_response(lambda r: "/validations/start/" in r.url and r.request.method == "POST") as answer:
        panel.get_by_role("button", name=_in(language, "Start the validation")).click()
    assert answer.value.status == 200  # htmx swaps it in; a 400 it would drop
    page.wait_for_function(SETTLED, timeout=60000)
    alert = page.locator("#validation-panel [role=alert]")
    alert.wait_for(timeout=15000)
    assert alert.inner_text().strip() == refusal
    assert page.locator("#validation-panel details").get_attribute("open") is not None  # the form stays open
    text = page.locator("#validation-panel").inner_text()
    if language == "ja":
        assert not _english_left(text), _english_left(text)
    _shot(page, language, viewport, "pairwise-refused")
    problems = _layout_problems(page)
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)
    assert not ValidationJob.objects.filter(cluster=cluster).exists()
    assert not page.console_errors, page.console_errors
    context.close()
