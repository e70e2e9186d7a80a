"""The API's entry to annotate.access, the one project policy shared with the pages. Its refusals
(ProjectNotFound, ActionForbidden: core.errors) become 404 / 403 in labeling_api.exceptions."""

from rest_framework.request import Request

from annotate import access
from annotate.access import PROJECT_ACTIONS
from annotate.models import Assignment, Project

__all__ = ["PROJECT_ACTIONS", "assignment_for_request", "project_and_roles_for_action", "project_for_action"]


def project_for_action(request: Request, slug: str, action: str) -> Project:
    return access.project_for(user=request.user, slug=slug, action=action)


def project_and_roles_for_action(request: Request, slug: str, action: str) -> tuple[Project, frozenset[str]]:
    return access.project_and_roles(user=request.user, slug=slug, action=action)


def assignment_for_request(request: Request, assignment_id: int) -> tuple[Assignment, frozenset[str]]:
    """The caller's own assignment while they may label in its project."""
    return access.assignment_for(user=request.user, assignment_id=assignment_id)
