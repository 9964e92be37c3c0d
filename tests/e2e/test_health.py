"""The health dashboard and an NCCL run in the browser: the charts draw under the CSP, no console error."""
import pytest

from clusters.health.ingest import service as services
from tests.e2e.conftest import screenshot, sign_in
from tests.health.factories_health import ClusterFactory, sample, validation_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _canvas_drawn(page, selector: str) -> bool:
    return page.evaluate(
        "(sel) => { const c = document.querySelector(sel); return !!(window.Chart && Chart.getChart(c)); }", selector)


def test_lead_sees_cluster_health_and_nccl_chart(page, live_server, world):
    cluster = ClusterFactory(organization=world.org_a, name="alpha-train")
    services.ingest(cluster, sample("dcgm_p5_healthy.prom"), "push")
    services.ingest(cluster, sample("dcgm_p5_xid79_missing_gpu.prom") + sample("efa_p5_two_nodes.prom"), "push")
    run = validation_run(cluster, "nccl_allreduce_2xp5_socket_srun.txt")
    sign_in(page, live_server, "lead_a")
    page.goto(f"{live_server.url}/clusters/{cluster.pk}/health/")
    assert page.get_by_role("heading", name="Health of alpha-train").is_visible()
    assert page.get_by_text("GPUs missing from nvidia-smi").is_visible()
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('health-trend'))")
    assert _canvas_drawn(page, "#health-trend")
    screenshot(page, "health-cluster")
    page.goto(f"{live_server.url}{run.get_absolute_url()}")
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('nccl-chart'))")
    assert page.get_by_text("NCCL used TCP sockets instead of EFA").is_visible()
    screenshot(page, "health-nccl-run")
    page.goto(f"{live_server.url}/health/")
    assert page.get_by_role("link", name="alpha-train").is_visible()
    assert not page.console_errors, page.console_errors
