"""A program manager opens the overview, freezes the week and downloads a CSV."""
import pytest

from tests.e2e.conftest import SHOTS, screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_overview_freeze_and_csv(page, live_server, world):
    from portal.review.models import WeeklyReview
    from tests.interactions.factories_interactions import InteractionFactory

    InteractionFactory(organization=world.org_a, owner=world.lead_a, summary="NCCL falls back to sockets", severity="high")
    sign_in(page, live_server, "pm")
    assert page.url.rstrip("/").endswith("/overview") or "/overview" in page.url
    assert page.get_by_text("Beta Works").first.is_visible()
    screenshot(page, "pm-overview")
    page.get_by_role("button", name="Freeze this week").first.click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Notes of the meeting").fill("Beta onboarded")
    screenshot(page, "pm-freeze-confirm")
    assert WeeklyReview.objects.count() == 0  # the dialog asks first
    dialog.get_by_role("button", name="Freeze the week").click()
    page.wait_for_load_state("networkidle")
    assert WeeklyReview.objects.count() == 1 and WeeklyReview.objects.get().notes == "Beta onboarded"
    screenshot(page, "pm-frozen-review")
    with page.expect_download() as download_info:
        page.locator("a[href*='/export/organizations.csv']").first.click()
    download = download_info.value
    path = SHOTS / download.suggested_filename
    download.save_as(str(path))
    text = path.read_text()
    lines = text.splitlines()
    assert len(lines) == 3, lines  # header + the two organizations
    assert any(line.startswith("Beta Works") for line in lines[1:]), lines
    assert not page.console_errors, page.console_errors
