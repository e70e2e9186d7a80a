"""The annotator workspace page: a server-rendered shell; the labeling UI is the frontend bundle.

Configuration goes to the page as JSON in a <script type="application/json"> block (no inline
script, so a strict CSP can forbid inline code); the bundle talks to the HTTP API for the rest.
"""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from annotate import selectors
from annotate.models import Project, Role

WORKSPACE_ROLES = {Role.ANNOTATOR, Role.LEAD}


@login_required
def workspace(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_object_or_404(Project, slug=slug)
    if not selectors.has_role(user=request.user, project=project, roles=WORKSPACE_ROLES):
        raise PermissionDenied("Only annotators and leads of this project can label it.")
    config = {
        "project": {
            "slug": project.slug,
            "name": project.name or project.slug,
            "mode": project.labeling_mode,
            "show_ground_truth": project.show_ground_truth,
            "guidelines": project.guidelines,
        },
        "api_base": reverse("project-list").removesuffix("projects/"),
        "csrf_token": get_token(request),
        "username": request.user.get_username(),
        "heartbeat_ms": settings.WORKSPACE_HEARTBEAT_SECONDS * 1000,
    }
    return render(request, "annotate/workspace.html", {"project": project, "config": config})
