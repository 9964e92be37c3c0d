"""Each role's main pages in Chromium, in English and in Japanese: axe-core finds no serious or critical violation,
and a screenshot of every page at desktop (1440 px) and phone (390 px) width is kept under test-artifacts/e2e/ux/
for review.

axe-core is vendored in tests/e2e/vendor/ (version and licence in its README): nothing is fetched at test time.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clusters.factories_clusters import ClusterFactory
from tests.e2e.conftest import LOCALES, SHOTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
WIDTHS = {"desktop": 1440, "phone": 390}
BLOCKING = {"serious", "critical"}


@pytest.fixture
def program_pages(world):
    """Enough of a program for every main page to show real rows."""
    from tests.interactions.factories_interactions import InteractionFactory
    from tests.workloads.factories_workloads import (
        CapacityReservationFactory,
        InstanceQuotaFactory,
        QuotaChangeRequestFactory,
        WorkloadFactory,
    )

    workload = WorkloadFactory(organization=world.org_a, name="alpha-llm-70b", lead_sa=world.lead_a)
    quota = InstanceQuotaFactory(organization=world.org_a, count=16)
    CapacityReservationFactory(organization=world.org_a, quota=quota)
    QuotaChangeRequestFactory(quota=quota, requested_count=32, justification="Pre-training run", requested_by=world.lead_a)
    cluster = ClusterFactory(organization=world.org_a, name="alpha-train", state="ready")
    interaction = InteractionFactory(organization=world.org_a, summary="NCCL falls back to sockets",
                                     visibility="shared", severity="high", workload=workload)
    return {
        "customer_a": ["/", f"/organizations/{world.org_a.slug}/", f"/clusters/{cluster.pk}/",
                       f"/clusters/{cluster.pk}/health/", f"/workloads/{workload.pk}/", "/interactions/",
                       interaction.get_absolute_url(), "/quotas/", "/quota-requests/", "/account/second-factor/",
                       "/account/second-factor/setup/"],
        "lead_a": ["/lead/", f"/organizations/{world.org_a.slug}/", "/interactions/", "/interactions/new/",
                   interaction.get_absolute_url(), f"/workloads/{workload.pk}/", f"/workloads/{workload.pk}/history/",
                   "/clusters/", "/clusters/blueprints/", "/clusters/blueprints/parallelcluster/launch/",
                   f"/clusters/{cluster.pk}/", "/health/", f"/clusters/{cluster.pk}/health/settings/"],
        "pm": ["/overview/", "/reviews/", "/quota-requests/", "/quotas/", "/health/", "/clusters/launch-day/",
               "/interactions/", "/workloads/", "/enablement/", "/sso/providers/", "/sso/providers/new/"],
    }




def _axe(page) -> list[dict]:
    # axe is evaluated through the DevTools protocol (the context bypasses the page's CSP for it only; the
    # other browser tests keep the CSP and fail on its console errors), then run on the whole document.
    page.evaluate(AXE.read_text())
    result = page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ['violations']});
        return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                       nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
    }""")
    return [v for v in result if v["impact"] in BLOCKING]


@pytest.mark.parametrize("language", LOCALES)
@pytest.mark.parametrize("role", ["customer_a", "lead_a", "pm"])
def test_main_pages_have_no_serious_accessibility_violations(browser, live_server, world, program_pages, role,
                                                             language):
    out = SHOTS / "ux"
    out.mkdir(parents=True, exist_ok=True)
    failures: dict[str, list] = {}
    for label, width in WIDTHS.items():
        context = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True,
                                      locale=LOCALES[language])
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        sign_in(page, live_server, role)
        for path in program_pages[role]:
            response = page.goto(f"{live_server.url}{path}")
            page.wait_for_load_state("networkidle")
            assert response.status == 200, f"{role} {path}: {response.status}"
            assert page.locator("html").get_attribute("lang") == language, f"{role} {path}: not in {language}"
            name = f"{role}-{language}-{label}-" + (path.strip("/").replace("/", "-") or "home")
            page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            violations = _axe(page)
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            if overflow > 1:  # the page itself scrolls sideways: something is wider than the screen
                violations.append({"id": "page-overflow", "impact": "serious", "help": f"{overflow}px too wide"})
            if violations:
                failures[f"{label} {path}"] = violations
        assert not errors, errors
        context.close()
    assert not failures, json.dumps(failures, indent=1)
