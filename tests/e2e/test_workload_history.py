"""In a browser: the workload page's history reloads itself (htmx) each time the workload changes."""
import pytest

from tests.e2e.conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_change_announced_while_the_history_is_being_swapped_is_not_lost(page, live_server, world):
    """A second save lands in the instant the first save's history answer is swapped in, before htmx has settled
    it: the history is still fetched again (two fetches, one section), so it can show the second save too."""
    from tests.workloads.factories_workloads import WorkloadFactory

    workload = WorkloadFactory(organization=world.org_a, name="History workload")
    sign_in(page, live_server, "lead_a")
    page.goto(f"{live_server.url}{workload.get_absolute_url()}")
    page.evaluate("""() => {
        window.__history_requests = 0;
        document.body.addEventListener("htmx:beforeRequest", (event) => {
            if (event.detail.pathInfo.requestPath.endsWith("/history/")) window.__history_requests += 1;
        });
        document.body.addEventListener("htmx:afterSwap", () => htmx.trigger(document.body, "workload-changed"),
                                       {once: true});
        htmx.trigger(document.body, "workload-changed");
    }""")
    page.wait_for_function("() => window.__history_requests >= 2", timeout=45000)
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.__history_requests") == 2
    assert page.locator("#workload-history").count() == 1
    assert not page.console_errors, page.console_errors
