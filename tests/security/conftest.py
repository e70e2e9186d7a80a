"""The browser fixtures of tests/e2e (Chromium via Playwright, the built bundle) for the CSP test."""

from tests.e2e.conftest import browser, frontend_static, pages  # noqa: F401
