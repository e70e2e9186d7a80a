"""The lead's dashboard page: a server-rendered shell; the charts are the frontend's dashboard bundle.

The bundle reads its configuration from a <script type="application/json"> block (no inline
script, so a strict CSP can forbid inline code) and draws everything from
`GET /api/v1/projects/{slug}/stats/`.
"""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.urls import reverse

from annotate.models import TaskKind
from annotate.pages import export_links, project_page


@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    # 404 to non-members whether or not the project exists, 403 to members who are not leads.
    project = project_page(request, slug, "dashboard")
    config = {
        "project": {"slug": project.slug, "name": project.name or project.slug},
        "task_kind": project.task_kind,
        "urls": {
            "stats": reverse("project-stats", args=[project.slug]),
            "annotators_csv": reverse("project-stats-csv", args=[project.slug]),
            "disagreements": reverse("project-disagreements", args=[project.slug]),
            "training_runs": reverse("project-list") + f"{project.slug}/training-runs/",
            "export_prm800k": reverse("project-export", args=[project.slug]) + "?format=prm800k",
            "export_trl": reverse("project-export", args=[project.slug]) + "?format=trl",
            "export_jobs": reverse("project-exports", args=[project.slug]),
            "api_docs": reverse("api-docs"),
        },
        "csrf_token": get_token(request),
        # Settling a disagreement is the admin's (gold marks, reopening): links only for who may open it.
        "admin": request.user.is_staff,
    }
    if project.task_kind == TaskKind.COMPARE:
        config["urls"]["compare_stats"] = reverse("project-compare-stats", args=[project.slug])
    context = {"project": project, "config": config, "exports": export_links(project)}
    return render(request, "annotate/dashboard.html", context)
