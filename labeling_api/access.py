"""The API side of annotate.access: its two refusals as DRF answers (404 to non-members, 403 to
members without the role). The policy table itself lives in annotate.access, shared with the pages.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from django.http import Http404
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request

from annotate import access
from annotate.access import PROJECT_ACTIONS, ActionForbidden, ProjectNotFound
from annotate.models import Assignment, Project

__all__ = ["PROJECT_ACTIONS", "assignment_for_request", "project_and_roles_for_action", "project_for_action"]


@contextmanager
def _as_http() -> Iterator[None]:
    try:
        yield
    except ProjectNotFound as exc:
        raise Http404(str(exc)) from None
    except ActionForbidden as exc:
        raise PermissionDenied(str(exc)) from None


def project_for_action(request: Request, slug: str, action: str) -> Project:
    with _as_http():
        return access.project_for(user=request.user, slug=slug, action=action)


def project_and_roles_for_action(request: Request, slug: str, action: str) -> tuple[Project, frozenset[str]]:
    with _as_http():
        return access.project_and_roles(user=request.user, slug=slug, action=action)


def assignment_for_request(request: Request, assignment_id: int) -> tuple[Assignment, frozenset[str]]:
    """The caller's own assignment while they may label in its project (annotate.access)."""
    with _as_http():
        return access.assignment_for(user=request.user, assignment_id=assignment_id)
