"""The annotator workspace page: a server-rendered shell; the labeling UI is the frontend bundle.

Configuration goes to the page as JSON in a <script type="application/json"> block (no inline
script, so a strict CSP can forbid inline code); the bundle talks to the HTTP API for the rest.
"""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.urls import reverse

from annotate.pages import project_page


@login_required
def workspace(request: HttpRequest, slug: str) -> HttpResponse:
    # 404 to non-members whether or not the project exists, 403 to members who may not label.
    project = project_page(request, slug, "label")
    config = {
        "project": {
            "slug": project.slug,
            "name": project.name or project.slug,
            "mode": project.labeling_mode,
            "show_ground_truth": project.show_ground_truth,
            "guidelines": project.guidelines,
            "task_kind": project.task_kind,
        },
        "api_base": reverse("project-list").removesuffix("projects/"),
        "csrf_token": get_token(request),
        "username": request.user.get_username(),
        "heartbeat_ms": settings.WORKSPACE_HEARTBEAT_SECONDS * 1000,
    }
    return render(request, "annotate/workspace.html", {"project": project, "config": config})
