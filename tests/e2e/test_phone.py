"""The pages a phone made awkward, at 390 px and at 1440 px: no page scrolls sideways, a node's reasons do not
stretch its row, the navigation folds into one row behind a menu button and the specialists' filters fold away;
axe finds no serious violation on them; in English and in Japanese."""
from __future__ import annotations

import json

import pytest

from clusters.health.ingest import service as services
from tests.e2e.conftest import LOCALES, SHOTS, sign_in
from tests.e2e.test_accessibility import _axe
from tests.engagement.factories_engagement import EscalationFactory, TrainedModelFactory, specialist
from tests.health.factories_health import ClusterFactory, sample
from tests.interactions.factories_interactions import InteractionFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"phone": 390, "desktop": 1440}
ROW_AT_MOST = 240  # px: a node row with several reasons, at phone width


@pytest.fixture
def pages(world):
    cluster = ClusterFactory(organization=world.org_a, name="alpha-train")
    services.ingest(cluster, sample("dcgm_p5_healthy.prom"), "push")
    services.ingest(cluster, sample("dcgm_p5_xid79_missing_gpu.prom") + sample("efa_p5_two_nodes.prom"), "push")
    TrainedModelFactory(organization=world.org_a, name="alpha-llm-70b-instruct-with-a-long-name")
    specialist("frameworks")
    interaction = InteractionFactory(organization=world.org_a, owner=world.lead_a, summary="NCCL falls back to sockets")
    EscalationFactory(interaction=interaction)
    return {"lead_a": [f"/organizations/{world.org_a.slug}/outcomes/", f"/clusters/{cluster.pk}/health/"],
            "frameworks": ["/escalations/"]}


def _check(page, width: int) -> list[str]:
    problems = []
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    if overflow > 0:  # name what sticks out (outside scrolling regions and folded menus)
        wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1
                         && !e.closest('details:not([open]), .overflow-auto'))
            .slice(0, 3).map(e => e.tagName + ' ' + e.textContent.trim().slice(0, 40))""")
        problems.append(f"scrolls sideways by {overflow}px: {wide}")
    rows = page.evaluate("""() => [...document.querySelectorAll('#h-nodes ~ div table tbody tr')]
                                  .map(r => r.getBoundingClientRect().height)""")
    if rows and max(rows) > ROW_AT_MOST:
        problems.append(f"a node row is {max(rows)}px tall")
    header = page.evaluate("document.querySelector('.site-header').getBoundingClientRect().height")
    menu = page.locator(".site-header summary.nav-menu-button")
    if width < 768:
        if header > 90:
            problems.append(f"the navigation takes {header}px")
        if not menu.is_visible():
            problems.append("no menu button")
        filters = page.locator("details.filter-collapse")
        if filters.count() and filters.first.get_attribute("open") is not None:
            problems.append("the filters are not folded")
    elif menu.is_visible():
        problems.append("a menu button on a wide screen")
    problems += [f"axe {v['id']}: {v['help']}" for v in _axe(page)]
    return problems


# The menu's names in each language (the phone menu is opened by them).
MENU = {"en": ("Escalations", "Program"), "ja": ("エスカレーション", "プログラム")}


@pytest.mark.parametrize("language", LOCALES)
@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_phone_pages_fit_the_screen(browser, live_server, pages, width, language):
    out = SHOTS / "phone"
    out.mkdir(parents=True, exist_ok=True)
    failures = {}
    escalations, program = MENU[language]
    for user, paths in pages.items():
        context = browser.new_context(viewport={"width": width, "height": 844}, bypass_csp=True,
                                      locale=LOCALES[language])
        page = context.new_page()
        sign_in(page, live_server, user)
        for path in paths:
            response = page.goto(f"{live_server.url}{path}")
            page.wait_for_load_state("networkidle")
            assert response.status == 200, (user, path, response.status)
            assert page.locator("html").get_attribute("lang") == language, (user, path)
            page.screenshot(path=str(out / f"{language}-{width}-{path.strip('/').replace('/', '-')}.png"),
                            full_page=True)
            problems = _check(page, width)
            if problems:
                failures[f"{user} {path}"] = problems
        if width < 768:  # the menu opens and shows the links
            page.locator(".site-header summary.nav-menu-button").click()
            if not page.get_by_role("link", name=escalations).first.is_visible():
                page.locator(".nav-group > summary", has_text=program).click()
            assert page.get_by_role("link", name=escalations).first.is_visible()
        context.close()
    assert not failures, json.dumps(failures, indent=1)


FILTERED_LISTS = ["workloads:workload_list", "workloads:quota_list", "workloads:reservation_list",
                  "workloads:changerequest_list", "interactions:interaction_list", "clusters:cluster_list",
                  "health:program_health", "engagement:escalation_list", "portal:timeline"]
# The list pages a role is refused (every other one it opens): the walk fails when a page's access changes.
REFUSED = {"customer_a": {"engagement:escalation_list", "health:program_health"},
           "frameworks": {"portal:timeline", "health:program_health"}}


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_every_filtered_list_folds_its_filters_on_a_phone_for_each_role(browser, live_server, world, width):
    """Each list page with a filter panel, as each role: at 390 px the panel is folded behind its button (which
    opens it) and nothing scrolls sideways; at 1440 px it is open and the button hidden."""
    from django.urls import reverse

    from tests.clusters.factories_clusters import ready_cluster
    from tests.workloads.factories_workloads import CapacityReservationFactory, InstanceQuotaFactory, WorkloadFactory

    ready_cluster(world.org_a, name="alpha-train-with-a-rather-long-cluster-name")
    InstanceQuotaFactory(organization=world.org_a)
    CapacityReservationFactory(organization=world.org_a)
    WorkloadFactory(organization=world.org_a)
    EscalationFactory(interaction=InteractionFactory(organization=world.org_a, owner=world.lead_a))
    specialist("frameworks")
    failures, refused = {}, {}
    for user in ("pm", "lead_a", "customer_a", "frameworks", "staff"):
        context = browser.new_context(viewport={"width": width, "height": 844}, bypass_csp=True)
        page = context.new_page()
        sign_in(page, live_server, user)
        for name in FILTERED_LISTS:
            path = reverse(name, args=[world.org_a.slug]) if name == "portal:timeline" else reverse(name)
            response = page.goto(f"{live_server.url}{path}")
            page.wait_for_load_state("networkidle")
            if response.status in (403, 404):  # not this role's page (404: an organization it does not see)
                refused.setdefault(user, set()).add(name)
                continue
            assert response.status == 200, (user, path, response.status)
            problems = []
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            if overflow > 0:
                problems.append(f"scrolls sideways by {overflow}px")
            panel = page.locator("details.filter-collapse")
            if panel.count() != 1:
                problems.append(f"{panel.count()} filter panels")
            elif width < 768:
                button = panel.locator("> summary")
                if panel.get_attribute("open") is not None or not button.is_visible():
                    problems.append("the filters are not folded behind their button")
                else:
                    button.click()
                    if not panel.locator("button[type=submit]").first.is_visible():
                        problems.append("the button does not open the filters")
            elif panel.get_attribute("open") is None or panel.locator("> summary").is_visible():
                problems.append("the filters are folded on a wide screen")
            if problems:
                failures[f"{user} {path}"] = problems
        context.close()
    assert not failures, json.dumps(failures, indent=1)
    assert refused == REFUSED, refused
