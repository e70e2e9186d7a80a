"""Refusals are expected and log quietly; server errors stay loud. Real requests through Django's
handler and the project's LOGGING (config/settings/base.py), captured at the root logger."""

from __future__ import annotations

import io
import logging

import pytest
from django.test import Client
from django.urls import path

from annotate.models import Role
from config import urls as project_urls
from tests.factories import make_project, make_user

pytestmark = pytest.mark.django_db


def boom(request):
    raise RuntimeError("a bug in a view")


# The project's URLs plus one view that fails, for the 500 case.
urlpatterns = [*project_urls.urlpatterns, path("boom/", boom)]
handler403, handler404, handler500 = project_urls.handler403, project_urls.handler404, project_urls.handler500


def _request_records(caplog, path_: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "django.request" and path_ in r.getMessage()]


@pytest.fixture
def annotator_client():
    project = make_project(slug="algebra")
    client = Client()
    client.force_login(make_user("ann", project=project, role=Role.ANNOTATOR))
    return client


def test_a_refused_page_logs_one_info_line_without_a_traceback(annotator_client, caplog):
    caplog.set_level(logging.DEBUG)
    response = annotator_client.get("/dashboard/algebra/")
    assert response.status_code == 403
    records = _request_records(caplog, "/dashboard/algebra/")
    assert [(r.levelname, r.getMessage()) for r in records] == [
        ("INFO", "Forbidden (Permission denied): /dashboard/algebra/")
    ]
    assert records[0].exc_info is None and "Traceback" not in caplog.text


def test_refused_api_calls_log_at_info(annotator_client, caplog):
    caplog.set_level(logging.DEBUG)
    assert annotator_client.get("/api/v1/projects/algebra/stats/").status_code == 403
    assert Client().get("/api/v1/projects/algebra/stats/").status_code in (401, 403)
    records = _request_records(caplog, "/api/v1/projects/algebra/stats/")
    assert len(records) == 2 and {r.levelname for r in records} == {"INFO"}
    assert all(r.exc_info is None for r in records) and "Traceback" not in caplog.text


@pytest.mark.urls(__name__)
def test_a_server_error_stays_an_error_with_its_traceback(caplog):
    caplog.set_level(logging.DEBUG)
    client = Client(raise_request_exception=False)
    assert client.get("/boom/").status_code == 500
    records = _request_records(caplog, "/boom/")
    assert [r.levelname for r in records] == ["ERROR"]
    assert records[0].exc_info is not None
    assert "Traceback" in caplog.text and "RuntimeError: a bug in a view" in caplog.text


def _stream_handlers_on_the_way(name: str) -> list[logging.StreamHandler]:
    """The stream handlers a record of logger `name` reaches: its own and its ancestors' while they propagate."""
    found, logger = [], logging.getLogger(name)
    while logger is not None:
        found += [h for h in logger.handlers if type(h) is logging.StreamHandler]
        logger = logger.parent if logger.propagate else None
    return found


def test_a_refusal_prints_one_line_under_debug_too(annotator_client, settings):
    # `make run` has DEBUG on, where Django's own console handler printed every django.* line a
    # second time beside the root's. Every console a django.request record reaches writes here.
    settings.DEBUG = True
    out = io.StringIO()
    handlers = _stream_handlers_on_the_way("django.request")
    previous = [h.setStream(out) for h in handlers]
    try:
        assert annotator_client.get("/dashboard/algebra/").status_code == 403
    finally:
        for handler, stream in zip(handlers, previous, strict=True):
            handler.setStream(stream)
    assert out.getvalue().count("Forbidden (Permission denied): /dashboard/algebra/") == 1, out.getvalue()
    assert "Traceback" not in out.getvalue()
