"""Browser tests: Playwright drives Debian's Chromium against a live server.

Screenshots of each end state go to test-artifacts/e2e/ for review.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make between
# browser steps are ordinary synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "e2e"
PASSWORD = "pw-for-tests"
# The browser walks run in each language the portal speaks; the browser asks for it (Accept-Language).
LOCALES = {"en": "en-US", "ja": "ja-JP"}


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--disable-component-update",
                  "--disable-sync", "--no-first-run"],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    yield page
    context.close()


def sign_in(page, live_server, username: str) -> None:
    """Sign in through the form, in whatever language the page speaks (fields found by their ids)."""
    page.goto(f"{live_server.url}/login/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(PASSWORD)
    # The page holds a second form (single sign-on): submit the one with the password field.
    page.locator("main form:has(#id_password) button[type=submit]").click()
    page.wait_for_load_state("networkidle")


def screenshot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
