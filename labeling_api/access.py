"""The API side of annotate.access: its two refusals as DRF answers (404 to non-members, 403 to
members without the role). The policy table itself lives in annotate.access, shared with the pages.
"""

from django.http import Http404
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request

from annotate.access import PROJECT_ACTIONS, ActionForbidden, ProjectNotFound, project_for
from annotate.models import Project

__all__ = ["PROJECT_ACTIONS", "project_for_action"]


def project_for_action(request: Request, slug: str, action: str) -> Project:
    try:
        return project_for(user=request.user, slug=slug, action=action)
    except ProjectNotFound as exc:
        raise Http404(str(exc)) from None
    except ActionForbidden as exc:
        raise PermissionDenied(str(exc)) from None
