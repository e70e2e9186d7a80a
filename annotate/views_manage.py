"""The lead's pages: create a project, its settings, data imports, members, and exports.

Thin views: the access check is annotate.access (the API's policy), the logic lives in
annotate.services.projects / team; imports and exports are started by the page's script through
the HTTP API (the same job endpoints scripts use), so there is one job path.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotate import access, export_page, guidelines_templates
from annotate.forms import (
    AddMemberForm,
    AutolabelForm,
    ExportForm,
    ImportForm,
    InviteForm,
    ProjectCreateForm,
    ProjectSettingsForm,
)
from annotate.models import Project, Role, TaskKind
from annotate.pages import project_page, project_tabs
from annotate.selectors import pages as reads
from annotate.services import projects, team


def _render(
    request: HttpRequest, project: Project, tab: str, template: str, status: int = 200, **context
) -> HttpResponse:
    tabs = project_tabs(user=request.user, project=project)
    return render(request, template, {"project": project, "tabs": tabs, "tab": tab, **context}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def project_new(request: HttpRequest) -> HttpResponse:
    if not projects.can_create_projects(user=request.user):
        raise PermissionDenied("Only members of the Project creators group may create projects.")
    kind = request.GET.get("kind", "math")
    kind = kind if kind in guidelines_templates.TEMPLATES else "math"
    initial = {"content_kind": kind, "guidelines": guidelines_templates.TEMPLATES[kind]}
    form = ProjectCreateForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        data.pop("content_kind")
        project = projects.create_project(user=request.user, slug=data.pop("slug"), **data)
        messages.success(request, f"Project {project.slug} created. You are its lead. Next: import its data.")
        return redirect("project-data", slug=project.slug)
    kinds = [(value, label, value == kind) for value, label in guidelines_templates.CHOICES]
    context = {"form": form, "kinds": kinds, "templates": guidelines_templates.ALL_TEMPLATES}
    return render(request, "annotate/manage/new.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_page(request, slug, "settings")
    form = ProjectSettingsForm(
        request.POST or None,
        instance=reads.settings_instance(project=project),
        kind_fixed=reads.has_data(project=project),
    )
    if request.method == "POST" and form.is_valid():
        try:
            changes = projects.update_settings(project=project, user=request.user, **form.cleaned_data)
        except projects.SettingsError as exc:
            form.add_error(exc.field, str(exc))
            return _render(request, project, "settings", "annotate/manage/settings.html", form=form, status=400)
        if changes:
            messages.success(request, "Saved: " + ", ".join(form.fields[name].label for name in changes) + ".")
        else:
            messages.info(request, "Nothing changed.")
        return redirect("project-settings", slug=project.slug)
    return _render(request, project, "settings", "annotate/manage/settings.html", form=form)


@login_required
@require_http_methods(["GET"])
def project_data(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_page(request, slug, "import")
    config = {
        "imports_url": reverse("project-imports", args=[project.slug]),
        "max_bytes": settings.IMPORT_MAX_BYTES,
        "csrf_token": get_token(request),
        # automatic labels: the autolabel API, as for scripts
        "autolabel_url": reverse("project-autolabel-jobs", args=[project.slug]),
        "autolabel_job_url": reverse("autolabel-job-detail", args=[0]).replace("/0/", "/{id}/"),
        "autolabel_cancel_url": reverse("autolabel-job-cancel", args=[0]).replace("/0/", "/{id}/"),
    }
    if project.task_kind == TaskKind.COMPARE:  # "a problem gets at most N pairs" names the project's bound
        config["pairs_per_problem"] = project.pairs_per_problem
    jobs = reads.recent_imports(project=project)
    roles = access.current_roles(user=request.user, project=project)
    context = {
        "autolabel_form": AutolabelForm() if access.may(user=request.user, roles=roles, action="autolabel") else None,
        "form": ImportForm(),
        "jobs": jobs,
        "config": config,
        "max_bytes": settings.IMPORT_MAX_BYTES,
        # solutions with no import job: loaded by a command (import_prm800k, the demo), said so
        "solutions": 0 if jobs else reads.solution_count(project=project),
    }
    return _render(request, project, "data", "annotate/manage/data.html", **context)


MEMBER_ACTIONS = ("add", "remove", "invite", "revoke")


@login_required
@require_http_methods(["GET", "POST"])
def project_members(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_page(request, slug, "members")
    action = request.POST.get("action") if request.method == "POST" else None
    add_form = AddMemberForm(request.POST if action == "add" else None)
    invite_form = InviteForm(request.POST if action == "invite" else None, prefix="invite")
    try:
        if action == "add" and add_form.is_valid():
            data = add_form.cleaned_data
            added = team.add_roles(
                project=project, actor=request.user, identifier=data["username"], roles=data["roles"]
            )
            # the username, also when the lead typed an e-mail address
            who, labels = team.find_user(data["username"]).get_username(), _and([Role(role).label for role in added])
            messages.success(request, f"Added {who} as {labels}." if added else f"{who} had those roles.")
            return redirect("project-members", slug=project.slug)
        if action == "remove_role":
            role, user_id = request.POST.get("role") or "", _int(request.POST, "user")
            own_lead = user_id == request.user.pk and role == Role.LEAD
            if own_lead and request.POST.get("confirm") != "yes":
                # A lead taking their own lead role loses this page: ask first, as for a removal.
                removal = team.removal(project=project, user_id=user_id, role=role)
                context = {"removal": removal, "is_self": True, "role": role}
                return _render(request, project, "members", "annotate/manage/member_remove.html", **context)
            username = team.remove_member(project=project, actor=request.user, user_id=user_id, role=role)
            messages.success(request, f"{username} is no longer {Role(role).label} in {project.slug}.")
            if own_lead:  # the members page is for leads only now (404)
                return redirect("home")
            return redirect("project-members", slug=project.slug)
        if action == "remove":
            user_id = _int(request.POST, "user")
            if request.POST.get("confirm") != "yes":
                # Every role goes at once: ask first, on a page of its own (no JavaScript needed);
                # a removal that would be refused says so now instead.
                removal = team.removal(project=project, user_id=user_id)
                context = {"removal": removal, "is_self": user_id == request.user.pk}
                return _render(request, project, "members", "annotate/manage/member_remove.html", **context)
            username = team.remove_member(project=project, actor=request.user, user_id=user_id)
            if user_id == request.user.pk:  # a lead who left can no longer open this page (404)
                messages.success(request, f"You left {project.name}.")
                return redirect("home")
            messages.success(request, f"Removed {username} from {project.slug}.")
            return redirect("project-members", slug=project.slug)
        if action == "invite" and invite_form.is_valid():
            invite, secret = team.create_invite(
                project=project, actor=request.user, roles=invite_form.cleaned_data["roles"]
            )
            # The link is shown once, on the next page load; only its hash is stored.
            request.session["invite_link"] = request.build_absolute_uri(reverse("invite-accept", args=[secret]))
            return redirect("project-members", slug=project.slug)
        if action == "revoke":
            team.revoke_invite(project=project, actor=request.user, invite_id=_int(request.POST, "invite"))
            messages.success(request, "Invite revoked.")
            return redirect("project-members", slug=project.slug)
    except team.TeamError as exc:
        if action == "add":
            add_form.add_error("username", str(exc))
        else:
            messages.error(request, str(exc))
    members = reads.members(project=project)
    invites = reads.open_invites(project=project)
    context = {
        "add_form": add_form,
        "invite_form": invite_form,
        "members": members,
        "invites": invites,
        "invite_link": request.session.pop("invite_link", None),
        "invite_days": settings.INVITE_MAX_AGE_DAYS,
    }
    return _render(request, project, "members", "annotate/manage/members.html", **context)


def _and(words: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return " and ".join([", ".join(words[:-1]), words[-1]]) if len(words) > 1 else "".join(words)


def _int(data, key: str) -> int:
    try:
        return int(data.get(key, ""))
    except ValueError:
        raise team.TeamError("That request was incomplete; reload the page and try again.") from None


@login_required
@require_http_methods(["GET"])
def project_export(request: HttpRequest, slug: str) -> HttpResponse:
    project = project_page(request, slug, "export")
    config = {
        "exports_url": reverse("project-exports", args=[project.slug]),
        "export_url": reverse("export-detail", args=[0]).replace("/0/", "/{id}/"),
        "csrf_token": get_token(request),
    }
    exports = reads.own_exports(project=project, user=request.user)
    for e in exports:
        e.newer_query = export_page.newer_query(e) if (e.filters or {}).get("cursor") else ""
        e.settings_summary = export_page.settings_summary(e)
        e.deleted_since = export_page.deleted_since(e)
        e.deletions_query = export_page.deletions_query(e) if e.deleted_since else ""
    initial, carried = export_page.form_state(request.GET)
    form = ExportForm(initial=initial, task_kind=project.task_kind)
    context = {"form": form, "carried": carried, "exports": exports, "config": config}
    return _render(request, project, "export", "annotate/manage/export.html", **context)
