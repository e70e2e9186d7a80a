"""Who gets what from every route: the permission matrix, written once as data.

tests/security/test_permission_matrix.py walks the whole URL conf and fails when a route has no
entry here, then calls every entry as every kind of caller against a hand-built project and
checks the status. The views enforce it (labeling_api.access, annotate.admin_scope); this table
is the specification they are checked against.

Caller kinds (API calls use `Authorization: Token`, pages a session):
- anonymous: nobody logged in;
- annotator, lead, ml_engineer: members of the project with that role (leads are staff with the
  Leads group's admin permissions, as annotate.services.members.add_member makes them);
- staff: is_staff without superuser and without any membership or permission;
- superuser;
- outsider: a lead (staff, Leads group) of another project.

Route ids in the URL point at rows of the project: an assignment and its draft belong to the
annotator, an export job to the lead, a training run to the project.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KINDS = ("anonymous", "outsider", "staff", "ml_engineer", "lead", "superuser", "annotator")


@dataclass(frozen=True)
class Call:
    """One request to a route and the status each kind of caller must get."""

    method: str
    expect: dict[str, int]
    body: Any = None
    # multipart instead of JSON
    multipart: bool = False


def _statuses(default: int, **by_kind: int) -> dict[str, int]:
    unknown = set(by_kind) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown caller kinds {unknown}")
    return {kind: by_kind.get(kind, default) for kind in KINDS}


def api(*, member: int = 403, **allowed: int) -> dict[str, int]:
    """A project API route: 401 without credentials, 404 to non-members (slugs do not leak),
    `member` (403) to members without a listed role; superusers as given."""
    base = {"anonymous": 401, "outsider": 404, "staff": 404, "superuser": allowed.pop("superuser", 404)}
    for role in ("annotator", "lead", "ml_engineer"):
        base[role] = allowed.pop(role, member)
    return _statuses(0, **base)


def own_assignment(ok: int) -> dict[str, int]:
    """An assignment route: only the assignment's annotator; 404 to everyone else, superusers too."""
    return _statuses(404, anonymous=401, annotator=ok)


def page(**allowed: int) -> dict[str, int]:
    """A login-required page: anonymous callers are redirected to the login page."""
    return _statuses(403, anonymous=302, **allowed)


def project_page(**allowed: int) -> dict[str, int]:
    """A project's page (annotate.pages, the API's policy): login first, then 404 to non-members
    (slugs do not leak), 403 to members without a listed role."""
    return _statuses(403, anonymous=302, outsider=404, staff=404, **allowed)


EVERYONE_OK = _statuses(200)
LOGGED_IN = _statuses(200, anonymous=302)

# ---------------------------------------------------------------------------------------------
# Named routes outside the admin's model pages
# ---------------------------------------------------------------------------------------------

ROUTES: dict[str, list[Call]] = {
    # API documentation: public on purpose (it describes the API, holds no data).
    "schema": [Call("GET", EVERYONE_OK)],
    "api-docs": [Call("GET", EVERYONE_OK)],
    "project-list": [Call("GET", _statuses(200, anonymous=401))],
    # Degraded-service status; waiting-job counts only over the caller's own lead/ml projects.
    "health": [Call("GET", _statuses(200, anonymous=401))],
    # Work queue: annotators and leads label; the claim (200) happens before the annotator's own calls.
    "task-next": [Call("GET", api(annotator=200, lead=200, superuser=403))],
    "project-me": [Call("GET", api(annotator=200, lead=200, ml_engineer=200, superuser=200))],
    "assignment-heartbeat": [Call("POST", own_assignment(200))],
    "assignment-draft": [Call("PUT", own_assignment(200), body={"note": "mine"})],
    "assignment-submit": [Call("POST", own_assignment(400), body={})],
    "assignment-skip": [Call("POST", own_assignment(200))],
    # Export and import: never annotators (they would read others' labels and gold answers).
    "project-export": [Call("GET", api(lead=200, ml_engineer=200, superuser=200))],
    "project-exports": [
        Call("GET", api(lead=200, ml_engineer=200, superuser=200)),
        Call("POST", api(lead=400, ml_engineer=400, superuser=400), body={"format": "nope"}),
    ],
    # An export job is its requester's (the lead's) alone.
    "export-detail": [Call("GET", _statuses(404, anonymous=401, lead=200, superuser=200))],
    "export-download": [Call("GET", _statuses(404, anonymous=401, lead=409, superuser=409))],
    "project-imports": [Call("POST", api(lead=400, superuser=400), body={}, multipart=True)],
    # Dashboard numbers: leads only (per-annotator quality is personal data).
    "project-stats": [Call("GET", api(lead=200, superuser=200))],
    "project-stats-csv": [Call("GET", api(lead=200, superuser=200))],
    # The model loop.
    "project-training-runs": [
        Call("GET", api(lead=200, ml_engineer=200, superuser=200)),
        Call("POST", api(lead=400, ml_engineer=400, superuser=400), body={"config": "not an object"}),
    ],
    "training-run-activate": [Call("POST", api(lead=409, superuser=409))],
    "prm-score": [
        Call(
            "POST",
            api(lead=409, ml_engineer=409, superuser=409),
            body={"project": "{slug}", "problem": "1+1?", "solutions": [["1+1=2"]]},
        )
    ],
    # Automatic labels: leads only (annotators must not see the automatic guess: anchoring).
    "project-autolabel-jobs": [
        Call("GET", api(lead=200, superuser=200)),
        Call("POST", api(lead=400, superuser=400), body={}),
    ],
    "autolabel-job-detail": [Call("GET", api(lead=200, superuser=200))],
    "solution-labels": [Call("GET", api(lead=200, superuser=200))],
    # Pages.
    "home": [Call("GET", LOGGED_IN)],
    "workspace": [Call("GET", page(annotator=200, lead=200))],
    "dashboard": [Call("GET", page(lead=200, superuser=200))],
    # Running a project from the browser (annotate.views_manage): creators (superusers and the
    # "Project creators" group) make projects; leads run them; exports for leads and ML engineers.
    "project-new": [Call("GET", _statuses(403, anonymous=302, superuser=200))],
    "project-settings": [
        Call("GET", project_page(lead=200, superuser=200)),
        Call("POST", project_page(lead=200, superuser=200), body={"overlap": "0"}),
    ],
    "project-data": [Call("GET", project_page(lead=200, superuser=200))],
    "project-members": [
        Call("GET", project_page(lead=200, superuser=200)),
        Call("POST", project_page(lead=200, superuser=200), body={"action": "add", "username": "nobody"}),
    ],
    "project-export-page": [Call("GET", project_page(lead=200, ml_engineer=200, superuser=200))],
    # A user's own account: API token (POST makes one, then shows it once), password.
    "account-token": [Call("GET", LOGGED_IN), Call("POST", _statuses(302))],
    "account-password": [Call("GET", LOGGED_IN)],
    # An invite link: anyone may open a valid one; an unknown, used or expired one is not found.
    "invite-accept": [Call("GET", _statuses(404))],
    # django.contrib.auth views.
    "login": [Call("GET", EVERYONE_OK)],
    "favicon": [Call("GET", _statuses(301))],  # public: a redirect to the static icon
    "logout": [Call("GET", _statuses(405)), Call("POST", _statuses(302))],
    "password_change": [Call("GET", LOGGED_IN)],
    "password_change_done": [Call("GET", LOGGED_IN)],
    "password_reset": [Call("GET", EVERYONE_OK)],
    "password_reset_done": [Call("GET", EVERYONE_OK)],
    "password_reset_confirm": [Call("GET", EVERYONE_OK)],
    "password_reset_complete": [Call("GET", EVERYONE_OK)],
}

# ---------------------------------------------------------------------------------------------
# The admin
# ---------------------------------------------------------------------------------------------

# Only staff get past the admin's login; everyone else is redirected to it.
_NOT_STAFF = {"anonymous": 302, "annotator": 302, "ml_engineer": 302}
ADMIN_STAFF = _statuses(200, **_NOT_STAFF)

ADMIN_ROUTES: dict[str, list[Call]] = {
    "admin:index": [Call("GET", ADMIN_STAFF)],
    # Logged-in staff are sent on to the index; others see the form.
    "admin:login": [Call("GET", _statuses(302, anonymous=200, annotator=200, ml_engineer=200))],
    "admin:logout": [Call("GET", _statuses(405, **_NOT_STAFF))],
    "admin:password_change": [Call("GET", ADMIN_STAFF)],
    "admin:password_change_done": [Call("GET", ADMIN_STAFF)],
    # Without app_label/model_name/field_name the autocomplete refuses everyone.
    "admin:autocomplete": [Call("GET", _statuses(403, **_NOT_STAFF))],
    "admin:jsi18n": [Call("GET", ADMIN_STAFF)],
    # "View on site": no domain model has a public URL.
    "admin:view_on_site": [Call("GET", _statuses(404, **_NOT_STAFF))],
    # /admin/annotate/: the app index lists only what the caller may see.
    "admin:app_list": [Call("GET", _statuses(200, staff=404, **_NOT_STAFF))],
    # The admin's catch-all: unknown admin URLs.
    "admin:<catch-all>": [Call("GET", _statuses(404, **_NOT_STAFF))],
}


@dataclass(frozen=True)
class AdminModel:
    """A registered model's admin pages. `audience`: "project" (leads of the row's project, see
    annotate.admin_scope) or "superuser"; `add` False where the admin refuses adding."""

    audience: str
    add: bool = True
    delete: bool = True
    views: tuple[str, ...] = field(default=("changelist", "add", "history", "delete", "change", "<redirect>"))


ADMIN_MODELS: dict[str, AdminModel] = {
    "auth.group": AdminModel("superuser"),
    "auth.user": AdminModel("superuser", views=AdminModel.views + ("password_change",)),
    "authtoken.tokenproxy": AdminModel("superuser"),
    # django-axes: login attempts and lockouts (superusers unlock people here).
    "axes.accessattempt": AdminModel("superuser", add=False),
    "axes.accesslog": AdminModel("superuser", add=False),
    "axes.accessfailurelog": AdminModel("superuser", add=False),
    "annotate.project": AdminModel("project"),
    "annotate.membership": AdminModel("project"),
    "annotate.labelerprofile": AdminModel("project"),
    "annotate.annotatorstatus": AdminModel("project"),
    "annotate.problem": AdminModel("project"),
    "annotate.solution": AdminModel("project"),
    "annotate.step": AdminModel("project", add=False),
    "annotate.assignment": AdminModel("project"),
    "annotate.annotation": AdminModel("project"),
    # The audit trail: read-only for everyone, superusers included.
    "annotate.annotationrevision": AdminModel("project", add=False, delete=False),
    "annotate.importjob": AdminModel("project", add=False),
    # The self-service pages' audit log: superusers read it, nobody changes it.
    "annotate.auditevent": AdminModel("superuser", add=False, delete=False),
    "annotate.export": AdminModel("project", add=False),
    "ml.trainingrun": AdminModel("project"),
    "ml.stepscore": AdminModel("project", add=False),
    "autolabel.autolabeljob": AdminModel("project", add=False),
    "autolabel.autosteplabel": AdminModel("project", add=False),
    "autolabel.autolabelsettings": AdminModel("project"),
    "autolabel.autolabeledsolution": AdminModel("project", add=False, delete=False),
}


def admin_model_expect(model: AdminModel, view: str) -> dict[str, int]:
    """Statuses of one admin page of a model, for a row of the test project."""
    if view == "<redirect>":  # /admin/app/model/<id>/ -> .../change/
        return _statuses(302)
    ok = 403 if (view == "add" and not model.add) or (view == "delete" and not model.delete) else 200
    if ok == 403:  # the page is refused to every staff user before any row is looked up
        return _statuses(403, **_NOT_STAFF)
    if model.audience == "superuser":
        return _statuses(403, superuser=ok, **_NOT_STAFF)
    # Callers who may not see the row (annotate.admin_scope) are told it does not exist: the
    # outsider lead always, staff without permissions on the history page (elsewhere a 403 first).
    if view in ("changelist", "add"):
        return _statuses(ok, staff=403, **_NOT_STAFF)
    return _statuses(ok, staff=302 if view == "history" else 403, outsider=302, **_NOT_STAFF)
