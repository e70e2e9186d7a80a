"""What every server-rendered project page shares: the access check (annotate.access, the same
policy as the API) and the project's tab bar."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.urls import reverse

from annotate import selectors
from annotate.access import ActionForbidden, ProjectNotFound, allowed_actions, project_for
from annotate.models import Project, Role, TaskKind


def project_page(request: HttpRequest, slug: str, action: str) -> Project:
    """The project if the signed-in user may do `action`: 404 to non-members, 403 to other members."""
    try:
        return project_for(user=request.user, slug=slug, action=action)
    except ProjectNotFound as exc:
        raise Http404(str(exc)) from None
    except ActionForbidden as exc:
        raise PermissionDenied(str(exc)) from None


@dataclass(frozen=True)
class Tab:
    key: str
    label: str
    url: str


def project_tabs(*, user, project: Project, roles: set[str] | None = None) -> list[Tab]:
    """Links to the project's pages this user may open, in a fixed order."""
    if roles is None:
        roles = selectors.user_roles(user=user, project=project)
    actions = allowed_actions(user=user, roles=roles)
    slug = project.slug
    tabs = []
    if roles & {Role.ANNOTATOR, Role.LEAD}:
        tabs.append(Tab("label", "Label", reverse("workspace", args=[slug])))
    if "stats" in actions:
        tabs.append(Tab("dashboard", "Dashboard", reverse("dashboard", args=[slug])))
    if "settings" in actions:
        tabs.append(Tab("settings", "Settings", reverse("project-settings", args=[slug])))
    if "import" in actions:
        tabs.append(Tab("data", "Data", reverse("project-data", args=[slug])))
    if "members" in actions:
        tabs.append(Tab("members", "Members", reverse("project-members", args=[slug])))
    if "export" in actions:
        tabs.append(Tab("export", "Export", reverse("project-export-page", args=[slug])))
    return tabs


# The streamed export formats offered on pages (token page, dashboard), per task kind: (format,
# query, what it gives).
EXPORT_FORMATS = {
    TaskKind.STEPS: (
        ("prm800k", "format=prm800k", "step labels as PRM800K JSONL"),
        ("trl", "format=trl&neutral=positive", "TRL stepwise supervision (prompt, completions, labels)"),
    ),
    TaskKind.COMPARE: (
        ("preference", "format=preference", "TRL preference rows (prompt, chosen, rejected; ties left out)"),
        ("prm800k", "format=prm800k", "first-wrong-step marks as PRM800K step labels"),
    ),
}


def export_links(project: Project) -> list[dict[str, str]]:
    """The project's streamed exports: format, what it gives, and the API path with its query."""
    path = reverse("project-export", args=[project.slug])
    formats = EXPORT_FORMATS.get(project.task_kind, EXPORT_FORMATS[TaskKind.STEPS])
    return [{"format": name, "what": what, "path": f"{path}?{query}"} for name, query, what in formats]
