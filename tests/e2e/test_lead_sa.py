"""A lead SA quick-logs an interaction with htmx, launches a cluster and watches it become ready."""
import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.e2e.conftest import screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAUNCH_FORM = {
    "name": "e2e-p5", "region": "ap-northeast-1", "full_stack": True,
    "network__AvailabilityZone": "ap-northeast-1a", "storage__LustreStorageCapacity": "2400",
    "storage__LustreThroughputPerTiB": "250", "storage__CreateHomeFileSystem": "true",
    "storage__HomeStorageCapacity": "512", "storage__HomeThroughputCapacity": "64",
    "cluster__ComputeInstanceType": "p5.48xlarge", "cluster__ComputeMinCount": "0",
    "cluster__ComputeMaxCount": "2", "cluster__CapacityType": "ONDEMAND", "cluster__Os": "alinux2023",
    "cluster__HeadNodeInstanceType": "m5.8xlarge", "cluster__QueueName": "compute",
}


def _fill(page, name, value):
    field = page.locator(f'[name="{name}"]')
    if field.count() == 0:
        return
    tag = field.first.evaluate("e => e.tagName.toLowerCase() + ':' + (e.type || '')")
    if tag.startswith("select"):
        field.first.select_option(str(value))
        # A choice may reload other choices (the region reloads the zones): let that answer land and settle first,
        # as a person would see it land, or the next choice is made in a list about to be replaced. htmx marks an
        # element while its request is out and while its answer is swapped and settled.
        page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')",
                               timeout=60000)
    elif tag.endswith(":checkbox"):
        field.first.check() if value else field.first.uncheck()
    else:
        field.first.fill(str(value))


def test_quick_log_updates_the_page_without_a_reload(page, live_server, world):
    sign_in(page, live_server, "lead_a")
    page.goto(f"{live_server.url}{world.org_a.get_absolute_url()}")
    page.evaluate("window.__no_reload = 'still here'")
    page.get_by_text("Quick log", exact=True).click()
    form = page.locator("form[hx-post*='quick-log']")
    form.get_by_label("Summary").fill("EFA traffic is zero on two nodes after the driver update")
    form.get_by_role("button", name="Log it").click()
    page.get_by_text("EFA traffic is zero on two nodes after the driver update").first.wait_for(timeout=15000)
    assert page.evaluate("window.__no_reload") == "still here"
    from workloads.interactions.models import Interaction

    assert Interaction.objects.filter(organization=world.org_a, summary__startswith="EFA traffic is zero").count() == 1
    screenshot(page, "lead-quick-log")
    assert not page.console_errors, page.console_errors


def test_launch_a_cluster_and_watch_it_become_ready(page, live_server, world, celery_worker_process):
    from tests.workloads.factories_workloads import InstanceQuotaFactory

    InstanceQuotaFactory(organization=world.org_a, instance_type_name="p5.48xlarge", count=16, region="ap-northeast-1")
    sign_in(page, live_server, "lead_a")
    page.goto(f"{live_server.url}/clusters/blueprints/parallelcluster/launch/")
    _fill(page, "organization", str(world.org_a.pk))
    for name, value in LAUNCH_FORM.items():
        _fill(page, name, value)
    page.locator("main form button[type=submit]").last.click()
    try:
        page.wait_for_url(re.compile(r".*/clusters/\d+/$"), timeout=90000)
    except PlaywrightTimeoutError:  # say what the form said instead of only that it did not move on
        errors = page.locator(".errorlist, [role=alert]").all_inner_texts()
        raise AssertionError(f"the launch did not start: {page.url} {errors}") from None
    page.get_by_text("Ready", exact=True).first.wait_for(timeout=120000)
    screenshot(page, "lead-cluster-ready")
    from clusters.models import Cluster

    cluster = Cluster.objects.get(organization=world.org_a, name="e2e-p5")
    assert cluster.state == "ready"
    assert not page.console_errors, page.console_errors
