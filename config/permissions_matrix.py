"""Who gets what from every route: the permission matrix, written once as data.

tests/security/test_permission_matrix.py walks the whole URL conf and fails when a route has no
entry here, then calls every entry as every kind of caller against a hand-built project and
checks the status. The views enforce it (labeling_api.access, annotate.admin_scope); this table
is the specification they are checked against.

Caller kinds (API calls use `Authorization: Token`, pages a session):
- anonymous: nobody logged in;
- outsider: a lead (staff, Leads group) of another project;
- staff: is_staff without superuser and without any membership or permission;
- removed: an annotator of the project whom the lead removed after they claimed a task (their
  calls on assignments go to their own old assignment);
- annotator, lead, ml_engineer: members of the project with that role (leads are staff with the
  Leads group's admin permissions, as annotate.services.members.add_member makes them);
- superuser.

Every expectation is written out for every kind, in the column order of KINDS, so a new kind or
a changed rule needs a decision on each route (`row` refuses a row of the wrong length). The
policy the views enforce is annotate.access: non-members (outsider, staff, removed) get 404 on
everything of a project, so slugs do not leak; members without the role 403.

Route ids in the URL point at rows of the project: an assignment and its draft belong to the
annotator, an export job to the lead, a training run to the project.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The annotator last: its calls on its own assignment may change that assignment.
KINDS = ("anonymous", "outsider", "staff", "removed", "ml_engineer", "lead", "superuser", "annotator")
NON_MEMBERS = ("outsider", "staff", "removed")


@dataclass(frozen=True)
class Call:
    """One request to a route and the status each kind of caller must get."""

    method: str
    expect: dict[str, int]
    body: Any = None
    # multipart instead of JSON
    multipart: bool = False


def row(*statuses: int) -> dict[str, int]:
    """Statuses in KINDS order: anonymous, outsider, staff, removed, ml_engineer, lead, superuser, annotator."""
    if len(statuses) != len(KINDS):
        raise ValueError(f"a row needs {len(KINDS)} statuses ({', '.join(KINDS)}), got {len(statuses)}")
    return dict(zip(KINDS, statuses, strict=True))


# ---------------------------------------------------------------------------------------------
# Named routes outside the admin's model pages
# ---------------------------------------------------------------------------------------------

# fmt: off
ROUTES: dict[str, list[Call]] = {
    #                                     anon out staff rem  ml  lead super ann
    # API documentation: public on purpose (it describes the API, holds no data).
    "schema": [Call("GET",            row(200, 200, 200, 200, 200, 200, 200, 200))],
    "api-docs": [Call("GET",          row(200, 200, 200, 200, 200, 200, 200, 200))],
    "project-list": [Call("GET",      row(401, 200, 200, 200, 200, 200, 200, 200))],
    # Degraded-service status, public for load balancers and monitors (database, broker, degraded);
    # the waiting-job counts only for a signed-in caller, over their own lead/ml projects.
    "health": [Call("GET",            row(200, 200, 200, 200, 200, 200, 200, 200))],
    # Work queue: annotators and leads label (superusers too only as members); the claim (200)
    # happens before the annotator's own calls.
    "task-next": [Call("GET",         row(401, 404, 404, 404, 403, 200, 403, 200))],
    "project-me": [Call("GET",        row(401, 404, 404, 404, 200, 200, 200, 200))],
    # An assignment answers only its annotator while they may still label in its project.
    "assignment-heartbeat": [Call("POST", row(401, 404, 404, 404, 404, 404, 404, 200))],
    "assignment-draft": [Call("PUT",  row(401, 404, 404, 404, 404, 404, 404, 200), body={"note": "mine"})],
    "assignment-submit": [Call("POST", row(401, 404, 404, 404, 404, 404, 404, 400), body={})],
    "assignment-skip": [Call("POST",  row(401, 404, 404, 404, 404, 404, 404, 200))],
    # Export and import: never annotators (they would read others' labels and gold answers).
    "project-export": [Call("GET",    row(401, 404, 404, 404, 200, 200, 200, 403))],
    "project-export-deletions": [Call("GET", row(401, 404, 404, 404, 200, 200, 200, 403))],
    "project-exports": [
        Call("GET",                   row(401, 404, 404, 404, 200, 200, 200, 403)),
        Call("POST",                  row(401, 404, 404, 404, 400, 400, 400, 403), body={"format": "nope"}),
    ],
    # An export job is its requester's (the lead's) alone.
    "export-detail": [Call("GET",     row(401, 404, 404, 404, 404, 200, 200, 404))],
    "export-download": [Call("GET",   row(401, 404, 404, 404, 404, 409, 409, 404))],
    "project-imports": [
        Call("GET",                   row(401, 404, 404, 404, 403, 200, 200, 403)),
        Call("POST",                  row(401, 404, 404, 404, 403, 400, 400, 403), body={}, multipart=True),
    ],
    # An import job: whoever may import into the project follows it (the data page polls it).
    "project-import-detail": [Call("GET", row(401, 404, 404, 404, 403, 200, 200, 403))],
    # Dashboard numbers: leads only (per-annotator quality is personal data).
    "project-stats": [Call("GET",     row(401, 404, 404, 404, 403, 200, 200, 403))],
    "project-stats-csv": [Call("GET", row(401, 404, 404, 404, 403, 200, 200, 403))],
    "project-disagreements": [Call("GET", row(401, 404, 404, 404, 403, 200, 200, 403))],
    "project-compare-stats": [Call("GET", row(401, 404, 404, 404, 403, 200, 200, 403))],
    # The model loop.
    "project-training-runs": [
        Call("GET",                   row(401, 404, 404, 404, 200, 200, 200, 403)),
        Call("POST",                  row(401, 404, 404, 404, 400, 400, 400, 403), body={"config": "not an object"}),
    ],
    "training-run-detail": [Call("GET", row(401, 404, 404, 404, 200, 200, 200, 403))],
    "training-run-activate": [Call("POST", row(401, 404, 404, 404, 403, 409, 409, 403))],
    "prm-score": [
        Call("POST",                  row(401, 404, 404, 404, 409, 409, 409, 403),
             body={"project": "{slug}", "problem": "1+1?", "solutions": [["1+1=2"]]}),
    ],
    # Automatic labels: leads only (annotators must not see the automatic guess: anchoring).
    "project-autolabel-jobs": [
        Call("GET",                   row(401, 404, 404, 404, 403, 200, 200, 403)),
        Call("POST",                  row(401, 404, 404, 404, 403, 400, 400, 403), body={}),
    ],
    "autolabel-job-detail": [Call("GET", row(401, 404, 404, 404, 403, 200, 200, 403))],
    # Stopping a job: whoever may start one (a second stop returns the stopped job).
    "autolabel-job-cancel": [Call("POST", row(401, 404, 404, 404, 403, 200, 200, 403))],
    "solution-labels": [Call("GET",   row(401, 404, 404, 404, 403, 200, 200, 403))],
    # Pages: anonymous callers go to the login page; non-members get 404 like the API.
    "home": [Call("GET",              row(302, 200, 200, 200, 200, 200, 200, 200))],
    "workspace": [Call("GET",         row(302, 404, 404, 404, 403, 200, 403, 200))],
    "dashboard": [Call("GET",         row(302, 404, 404, 404, 403, 200, 200, 403))],
    # Running a project from the browser (annotate.views_manage): creators (superusers and the
    # "Project creators" group) make projects; leads run them; exports for leads and ML engineers.
    "project-new": [Call("GET",       row(302, 403, 403, 403, 403, 403, 200, 403))],
    "project-settings": [
        Call("GET",                   row(302, 404, 404, 404, 403, 200, 200, 403)),
        Call("POST",                  row(302, 404, 404, 404, 403, 200, 200, 403), body={"overlap": "0"}),
    ],
    "project-data": [Call("GET",      row(302, 404, 404, 404, 403, 200, 200, 403))],
    "project-members": [
        Call("GET",                   row(302, 404, 404, 404, 403, 200, 200, 403)),
        Call("POST",                  row(302, 404, 404, 404, 403, 200, 200, 403),
             body={"action": "add", "username": "nobody"}),
    ],
    "project-export-page": [Call("GET", row(302, 404, 404, 404, 200, 200, 200, 403))],
    # A user's own account: API token (POST makes one, then shows it once), password.
    "account-token": [Call("GET",     row(302, 200, 200, 200, 200, 200, 200, 200)),
                      Call("POST",    row(302, 302, 302, 302, 302, 302, 302, 302))],
    "account-password": [Call("GET",  row(302, 200, 200, 200, 200, 200, 200, 200))],
    # An invite link: anyone may open a valid one; an unknown, used or expired one is not found.
    "invite-accept": [Call("GET",     row(404, 404, 404, 404, 404, 404, 404, 404))],
    # django.contrib.auth views.
    "login": [Call("GET",             row(200, 200, 200, 200, 200, 200, 200, 200))],
    # The icon for pages that do not link it: public, a redirect to the static file.
    "favicon": [Call("GET",           row(301, 301, 301, 301, 301, 301, 301, 301))],
    "logout": [Call("GET",            row(405, 405, 405, 405, 405, 405, 405, 405)),
               Call("POST",           row(302, 302, 302, 302, 302, 302, 302, 302))],
    "password_change": [Call("GET",   row(302, 200, 200, 200, 200, 200, 200, 200))],
    "password_change_done": [Call("GET", row(302, 200, 200, 200, 200, 200, 200, 200))],
}
# fmt: on

# ---------------------------------------------------------------------------------------------
# The admin
# ---------------------------------------------------------------------------------------------

# Only staff get past the admin's login (outsider, staff, lead, superuser); everyone else is
# redirected to it (anonymous, removed, ml_engineer, annotator).
STAFF_KINDS = ("outsider", "staff", "lead", "superuser")


def staff_row(staff: int, others: int = 302) -> dict[str, int]:
    return {kind: staff if kind in STAFF_KINDS else others for kind in KINDS}


# fmt: off
ADMIN_ROUTES: dict[str, list[Call]] = {
    #                                          anon out staff rem  ml  lead super ann
    "admin:index": [Call("GET",            row(302, 200, 200, 302, 302, 200, 200, 302))],
    # Logged-in staff are sent on to the index; others see the form.
    "admin:login": [Call("GET",            row(200, 302, 302, 200, 200, 302, 302, 200))],
    "admin:logout": [Call("GET",           row(302, 405, 405, 302, 302, 405, 405, 302))],
    "admin:password_change": [Call("GET",  row(302, 200, 200, 302, 302, 200, 200, 302))],
    "admin:password_change_done": [Call("GET", row(302, 200, 200, 302, 302, 200, 200, 302))],
    # Without app_label/model_name/field_name the autocomplete refuses everyone.
    "admin:autocomplete": [Call("GET",     row(302, 403, 403, 302, 302, 403, 403, 302))],
    "admin:jsi18n": [Call("GET",           row(302, 200, 200, 302, 302, 200, 200, 302))],
    # "View on site": no domain model has a public URL.
    "admin:view_on_site": [Call("GET",     row(302, 404, 404, 302, 302, 404, 404, 302))],
    # /admin/annotate/: the app index lists only what the caller may see.
    "admin:app_list": [Call("GET",         row(302, 200, 404, 302, 302, 200, 200, 302))],
    # The admin's catch-all: unknown admin URLs.
    "admin:<catch-all>": [Call("GET",      row(302, 404, 404, 302, 302, 404, 404, 302))],
}
# fmt: on


@dataclass(frozen=True)
class AdminModel:
    """A registered model's admin pages. `audience`: "project" (leads of the row's project, see
    annotate.admin_scope) or "superuser"; `add` False where the admin refuses adding;
    `add_by_creators`: only superusers and the Project creators group may add (no kind here is in
    that group), as on the New project page; `delete_by_superusers`: only superusers delete (a row
    that serves every project, such as a pseudonym)."""

    audience: str
    add: bool = True
    add_by_creators: bool = False
    delete: bool = True
    delete_by_superusers: bool = False
    views: tuple[str, ...] = field(default=("changelist", "add", "history", "delete", "change", "<redirect>"))


ADMIN_MODELS: dict[str, AdminModel] = {
    "auth.group": AdminModel("superuser"),
    "auth.user": AdminModel("superuser", views=AdminModel.views + ("password_change",)),
    # view and delete (revoke) only, the key shown as its first characters (annotate.admin.tokens)
    "annotate.apitoken": AdminModel("superuser", add=False),
    # django-axes: login attempts and lockouts (superusers unlock people here).
    "axes.accessattempt": AdminModel("superuser", add=False),
    "axes.accesslog": AdminModel("superuser", add=False),
    "axes.accessfailurelog": AdminModel("superuser", add=False),
    "annotate.project": AdminModel("project", add_by_creators=True),
    "annotate.membership": AdminModel("project"),
    # Who a pseudonym is, in every project of theirs: read-only; superusers delete.
    "annotate.labelerprofile": AdminModel("project", add=False, delete_by_superusers=True),
    "annotate.annotatorstatus": AdminModel("project"),
    "annotate.problem": AdminModel("project"),
    "annotate.solution": AdminModel("project"),
    # Steps go with their solution, never alone (labels rate them by position): no delete page.
    "annotate.step": AdminModel("project", add=False, delete=False),
    "annotate.assignment": AdminModel("project"),
    # Labels come from submits and imports; the admin corrects them (with an audit trail). Deleting one
    # is for superusers (annotate.admin.audited: recorded whole, its solution served again).
    "annotate.annotation": AdminModel("project", add=False, delete_by_superusers=True),
    # The audit trail: read-only for everyone, superusers included.
    "annotate.annotationrevision": AdminModel("project", add=False, delete=False),
    "annotate.importjob": AdminModel("project", add=False),
    # The self-service pages' audit log: superusers read it, nobody changes it.
    "annotate.auditevent": AdminModel("superuser", add=False, delete=False),
    "annotate.invite": AdminModel("superuser", add=False, delete=False),
    "annotate.export": AdminModel("project", add=False),
    # Tombstones of deleted labels (export/deletions/): read-only, never deleted.
    "annotate.deletedlabel": AdminModel("project", add=False, delete=False),
    # Compare projects: pairs (gold pairs are marked here) and the preferences submitted on them.
    "annotate.comparison": AdminModel("project"),
    # A compare project's labels, read-only (no audit trail for them); superusers delete, as for annotations.
    "annotate.preference": AdminModel("project", add=False, delete_by_superusers=True),
    # Runs come from the API, auto-retrain and the command, which check their settings: read-only here.
    "ml.trainingrun": AdminModel("project", add=False),
    "ml.stepscore": AdminModel("project", add=False),
    "autolabel.autolabeljob": AdminModel("project", add=False),
    "autolabel.autosteplabel": AdminModel("project", add=False),
    "autolabel.autolabelsettings": AdminModel("project"),
    "autolabel.autolabeledsolution": AdminModel("project", add=False, delete=False),
}


def admin_model_expect(model: AdminModel, view: str) -> dict[str, int]:
    """Statuses of one admin page of a model, for a row of the test project (written per kind:
    non-staff callers are always sent to the admin login)."""
    if view == "<redirect>":  # /admin/app/model/<id>/ -> .../change/
        return row(302, 302, 302, 302, 302, 302, 302, 302)
    ok = 403 if (view == "add" and not model.add) or (view == "delete" and not model.delete) else 200
    if ok == 403:  # the page is refused to every staff user before any row is looked up
        return staff_row(403)
    if view == "delete" and model.delete_by_superusers:
        #        anon out staff rem  ml  lead super ann
        return row(302, 403, 403, 302, 302, 403, 200, 302)
    if view == "add" and model.add_by_creators:
        #        anon out staff rem  ml  lead super ann
        return row(302, 403, 403, 302, 302, 403, 200, 302)
    if model.audience == "superuser":
        #        anon out staff rem  ml  lead super ann
        return row(302, 403, 403, 302, 302, 403, ok, 302)
    # Callers who may not see the row (annotate.admin_scope) are told it does not exist: the
    # outsider lead always, staff without permissions on the history page (elsewhere a 403 first).
    if view in ("changelist", "add"):
        return row(302, ok, 403, 302, 302, ok, ok, 302)
    return row(302, 302, 302 if view == "history" else 403, 302, 302, ok, ok, 302)
