"""Browser tests: Debian's Chromium driven by Playwright against pytest-django's live server.

The frontend bundle is built first when missing or older than its sources (needs Node.js and
frontend/node_modules; `make setup` provides both). Pages are opened at desktop size and every
test fails on a JavaScript dialog or an uncaught page error.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make to check
# the database are still plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
DIST = FRONTEND / "dist"
BUNDLE = DIST / "steplabel" / "workspace.js"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR", ROOT / "test-results" / "screenshots"))
DESKTOP = {"width": 1440, "height": 900}


def _bundle_is_stale() -> bool:
    if not BUNDLE.exists() or not (DIST / "steplabel" / "pages.js").exists():
        return True
    built = BUNDLE.stat().st_mtime
    sources = [p for p in (FRONTEND / "src").rglob("*") if p.is_file()]
    sources += [FRONTEND / "package-lock.json", FRONTEND / "vite.config.ts", FRONTEND / "vite.pages.config.ts"]
    return any(p.exists() and p.stat().st_mtime > built for p in sources)


def _build_frontend() -> None:
    if not (FRONTEND / "node_modules").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=FRONTEND, check=True)
    subprocess.run(["npm", "run", "build"], cwd=FRONTEND, check=True, capture_output=True)


@pytest.fixture(scope="session")
def frontend_static() -> Path:
    """The built bundle, findable by staticfiles (settings only list frontend/dist if it existed)."""
    if _bundle_is_stale():
        _build_frontend()
    from django.conf import settings
    from django.contrib.staticfiles import finders

    if DIST.resolve() not in {Path(p).resolve() for p in settings.STATICFILES_DIRS}:
        settings.STATICFILES_DIRS = [*settings.STATICFILES_DIRS, DIST]
        finders.get_finder.cache_clear()
    return DIST


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (or `make setup`)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class PageFactory:
    """Opens pages in fresh browser contexts (separate cookies and storage) and watches them."""

    def __init__(self, browser, base_url: str) -> None:
        self.browser = browser
        self.base_url = base_url
        self.contexts: list = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []

    def context(self, **options):
        """A browser context (desktop viewport unless `options` say otherwise: a phone, touch)."""
        ctx = self.browser.new_context(**{"viewport": DESKTOP, **options}, base_url=self.base_url)
        ctx.set_default_timeout(10_000)
        self.contexts.append(ctx)
        return ctx

    def page(self, ctx=None):
        page = (ctx or self.context()).new_page()
        page.on("dialog", self._on_dialog)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        return page

    def _on_dialog(self, dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def close(self) -> None:
        for ctx in self.contexts:
            ctx.close()
        _wait_for_server_requests_to_finish()


def _wait_for_server_requests_to_finish(timeout: float = 10.0) -> None:
    """A closing page still sends its last draft save; let the live server finish such requests
    before the test database is flushed, or the flush's TRUNCATE deadlocks with them."""
    from django.db import connection

    deadline = time.monotonic() + timeout
    time.sleep(0.2)  # requests the browser sent as the contexts closed reach the server
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state <> 'idle'"
            )
            if cursor.fetchone()[0] == 0:
                return
        time.sleep(0.1)


@pytest.fixture
def pages(browser, live_server, frontend_static) -> Iterator[PageFactory]:
    factory = PageFactory(browser, live_server.url)
    yield factory
    factory.close()
    assert factory.dialogs == [], f"a page opened a JavaScript dialog: {factory.dialogs}"
    assert factory.errors == [], f"uncaught errors in the page: {factory.errors}"


@pytest.fixture
def screenshot() -> Callable[..., Path]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str, full_page: bool = False) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return take
