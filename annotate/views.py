"""Server-rendered pages: the home page lists the caller's projects."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotate.models import Role
from annotate.pages import project_tabs
from annotate.selectors import pages as reads
from annotate.services.projects import can_create_projects

ROLE_LABELS = dict(Role.choices)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    rows = reads.home_rows(user=request.user)
    for row in rows:
        row["role_labels"] = [ROLE_LABELS[r] for r in row["roles"]] or (
            ["Superuser"] if request.user.is_superuser else []
        )
        row["tabs"] = project_tabs(user=request.user, project=row["project"], roles=set(row["roles"]))
    context = {"rows": rows, "can_create": can_create_projects(user=request.user)}
    return render(request, "annotate/home.html", context)
