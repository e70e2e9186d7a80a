"""The permission matrix (config/permissions_matrix.py) over every route of the URL conf.

`test_every_route_has_an_entry` walks get_resolver() recursively (admin, auth, API, schema, pages)
and fails on a route the matrix does not list, so a new route cannot ship without a decision on
who may call it. `test_route` then calls each entry as each kind of caller, against a hand-built
project with real rows, and checks the status.
"""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.contrib.contenttypes.models import ContentType
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotate.models import Annotation, Assignment, AssignmentStatus
from config.permissions_matrix import (
    ADMIN_MODELS,
    ADMIN_ROUTES,
    KINDS,
    NON_MEMBERS,
    ROUTES,
    Call,
    admin_model_expect,
)
from tests.security.world import World, build_world

_REDIRECT = re.compile(r"^admin/(\w+)/(\w+)/<path:object_id>/$")


def walk(patterns=None, prefix: str = "", namespace: str | None = None):
    """(key, route) for every URL pattern: `namespace:name`, or a stand-in name for unnamed ones."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            ns = namespace
            if pattern.namespace:
                ns = f"{namespace}:{pattern.namespace}" if namespace else pattern.namespace
            yield from walk(pattern.url_patterns, prefix + str(pattern.pattern), ns)
            continue
        assert isinstance(pattern, URLPattern)
        route = prefix + str(pattern.pattern)
        if pattern.name:
            yield (f"{namespace}:{pattern.name}" if namespace else pattern.name), route
        elif match := _REDIRECT.match(route):
            yield f"admin:{match[1]}_{match[2]}_<redirect>", route
        elif route.endswith("(?P<url>.*)$"):
            yield "admin:<catch-all>", route
        else:
            yield f"<unnamed {route}>", route


def _admin_model_keys() -> dict[str, tuple[str, str]]:
    keys = {}
    for label, model in ADMIN_MODELS.items():
        app, name = label.split(".")
        for view in model.views:
            keys[f"admin:{app}_{name}_{view}"] = (label, view)
    return keys


ADMIN_MODEL_KEYS = _admin_model_keys()
ALL_KEYS = sorted({*ROUTES, *ADMIN_ROUTES, *ADMIN_MODEL_KEYS})


def test_every_route_has_an_entry():
    routes = dict(walk())
    missing = sorted(key for key in routes if key not in ALL_KEYS)
    assert not missing, f"routes without a permission-matrix entry (config/permissions_matrix.py): {missing}"
    stale = sorted(key for key in ALL_KEYS if key not in routes)
    assert not stale, f"matrix entries for routes that no longer exist: {stale}"
    registered = {model._meta.label_lower for model in admin.site._registry}
    assert registered == set(ADMIN_MODELS), "every admin-registered model needs an ADMIN_MODELS entry"


def test_matrix_lists_every_kind():
    """Every expectation names every kind (a hand-written dict that forgets one fails here)."""
    wrong = [
        key
        for key, calls in {**ROUTES, **ADMIN_ROUTES, **{k: _calls(k) for k in ADMIN_MODEL_KEYS}}.items()
        for call in calls
        if list(call.expect) != list(KINDS)
    ]
    assert not wrong, f"expectations that do not list exactly {KINDS} in order: {wrong}"


def test_matrix_hides_projects_from_non_members():
    """The rule the matrix must encode: on every route of one project (its slug or a row id in the
    URL), a caller who is not a member gets the same 404 whether or not the project exists."""
    project_routes = [key for key, route in walk() if key in ROUTES and ("<slug:slug>" in route or "<int:id>" in route)]
    project_routes += ["workspace", "dashboard", "prm-score"]
    leaks = [
        f"{key} as {kind}: {call.expect[kind]}"
        for key in sorted(set(project_routes))
        for call in ROUTES[key]
        for kind in NON_MEMBERS
        if call.expect[kind] != 404
    ]
    assert not leaks, "non-members must get 404 on project routes:\n" + "\n".join(leaks)


def _url(key: str, world: World, kind: str) -> str:
    project, rows = world.project, world.rows
    if key in ADMIN_MODEL_KEYS:
        label, view = ADMIN_MODEL_KEYS[key]
        row = rows[label]
        if view == "<redirect>":
            app, name = label.split(".")
            return f"/admin/{app}/{name}/{getattr(row, 'user_id', row.pk)}/"
        if view in ("changelist", "add"):
            return reverse(key)
        if label == "authtoken.tokenproxy":  # DRF's token admin addresses tokens by user id
            return reverse(key, kwargs={"object_id": row.user_id})
        if view == "password_change":
            return reverse(key, kwargs={"id": row.pk})
        return reverse(key, kwargs={"object_id": row.pk})
    special = {
        "admin:<catch-all>": "/admin/no-such-page/",
        "admin:app_list": reverse("admin:app_list", kwargs={"app_label": "annotate"}),
        "admin:view_on_site": reverse(
            "admin:view_on_site",
            kwargs={"content_type_id": ContentType.objects.get_for_model(project).pk, "object_id": project.pk},
        ),
        "invite-accept": reverse("invite-accept", kwargs={"secret": "no-such-invite"}),
        "project-import-detail": reverse(
            "project-import-detail", kwargs={"slug": project.slug, "id": rows["annotate.importjob"].pk}
        ),
        "export-detail": reverse("export-detail", kwargs={"id": rows["annotate.export"].pk}),
        "export-download": reverse("export-download", kwargs={"id": rows["annotate.export"].pk}),
        "autolabel-job-detail": reverse("autolabel-job-detail", kwargs={"id": rows["autolabel.autolabeljob"].pk}),
        "autolabel-job-cancel": reverse("autolabel-job-cancel", kwargs={"id": rows["autolabel.autolabeljob"].pk}),
        "solution-labels": reverse(
            "solution-labels", kwargs={"slug": project.slug, "id": rows["annotate.solution"].pk}
        ),
        "training-run-activate": reverse(
            "training-run-activate", kwargs={"slug": project.slug, "id": rows["ml.trainingrun"].pk}
        ),
        "training-run-detail": reverse(
            "training-run-detail", kwargs={"slug": project.slug, "id": rows["ml.trainingrun"].pk}
        ),
    }
    if key in special:
        return special[key]
    if key.startswith("assignment-"):  # a removed member calls on their own old assignment
        assignment = world.removed_assignment if kind == "removed" else rows["annotate.assignment"]
        return reverse(key, kwargs={"id": assignment.pk})
    try:
        return reverse(key, kwargs={"slug": project.slug})
    except Exception:
        return reverse(key)


def _calls(key: str) -> list[Call]:
    if key in ADMIN_MODEL_KEYS:
        label, view = ADMIN_MODEL_KEYS[key]
        return [Call("GET", admin_model_expect(ADMIN_MODELS[label], view))]
    return (ROUTES | ADMIN_ROUTES)[key]


def _request(world: World, kind: str, url: str, call: Call):
    is_api = url.startswith("/api/")
    client = world.api_client(kind) if is_api else world.session_client(kind)
    body = call.body
    if isinstance(body, dict):
        body = {k: (v.format(slug=world.project.slug) if isinstance(v, str) else v) for k, v in body.items()}
    method = getattr(client, call.method.lower())
    if call.method == "GET":
        return method(url)
    if call.multipart:
        return method(url, body or {})
    return method(url, body, format="json") if is_api else method(url, body or {})


@pytest.mark.django_db
@pytest.mark.parametrize("key", ALL_KEYS)
def test_route(key):
    world = build_world()
    wrong = []
    for call in _calls(key):
        for kind in KINDS:  # the assignment's owner last: its calls may change the assignment
            url = _url(key, world, kind)
            response = _request(world, kind, url, call)
            if response.status_code != call.expect[kind]:
                wrong.append(f"{call.method} {url} as {kind}: {response.status_code}, expected {call.expect[kind]}")
    assert not wrong, "\n".join(wrong)


# ---------------------------------------------------------------------------------------------
# What the statuses alone do not show
# ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_annotator_task_carries_no_labels_or_gold_answers():
    """The task an annotator gets holds the problem and steps only: no label of anyone, no gold mark."""
    world = build_world()
    world.project.show_ground_truth = False
    world.project.save()
    response = world.api_client("annotator").get(reverse("task-next", kwargs={"slug": world.project.slug}))
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {
        "id",
        "assignment_id",
        "project",
        "mode",
        "lease_expires_at",
        "lease_seconds",
        "generation",
        "problem",
        "kind",
        "critique_required",
        "steps",
        "draft",
    }
    assert set(body["problem"]) == {"text"}  # no ground-truth answer when the project hides it
    # Per step: its text and whether it is to be rated (and its type for traces), never a rating.
    assert all({"index", "text"} <= set(step) <= {"index", "text", "rated", "type"} for step in body["steps"])


@pytest.mark.django_db
def test_annotators_see_only_their_own_drafts():
    """Another annotator's draft is 404, not readable or writable, even with a valid token."""
    world = build_world()
    mine = world.rows["annotate.assignment"]
    saved = world.api_client("annotator").put(f"/api/v1/assignments/{mine.pk}/draft/", {"x": 1}, format="json")
    assert saved.status_code == 200
    other = build_world()
    other_annotator = other.api_client("annotator")
    for method, suffix in (("put", "draft"), ("post", "heartbeat"), ("post", "submit"), ("post", "skip")):
        response = getattr(other_annotator, method)(f"/api/v1/assignments/{mine.pk}/{suffix}/", {}, format="json")
        assert response.status_code == 404, suffix
    mine.refresh_from_db()
    assert mine.draft == {"x": 1} and mine.status == AssignmentStatus.ACTIVE


@pytest.mark.django_db
def test_outsider_lead_cannot_see_or_change_rows_in_the_admin():
    """A lead of another project: not in the lists, not editable, not addable as a member."""
    world = build_world()
    outsider = world.session_client("outsider")
    annotation = world.rows["annotate.annotation"]
    listing = outsider.get("/admin/annotate/annotation/").content.decode()
    assert f"/admin/annotate/annotation/{annotation.pk}/change/" not in listing
    response = outsider.post(
        f"/admin/annotate/annotation/{annotation.pk}/change/", {"label_steps": "[]", "finish_reason": "give_up"}
    )
    assert response.status_code == 302
    assert Annotation.objects.get(pk=annotation.pk).label_steps == annotation.label_steps
    # Adding oneself to a project one does not lead: the project is not a valid choice.
    response = outsider.post(
        "/admin/annotate/membership/add/",
        {"project": world.project.pk, "user": world.users["outsider"].pk, "role": "lead"},
    )
    assert response.status_code == 200 and b"Select a valid choice" in response.content
    assert not world.project.memberships.filter(user=world.users["outsider"]).exists()
    # The lead of the project sees the row.
    lead_listing = world.session_client("lead").get("/admin/annotate/annotation/").content.decode()
    assert f"/admin/annotate/annotation/{annotation.pk}/change/" in lead_listing


@pytest.mark.django_db
def test_staff_flag_alone_opens_no_project():
    """Leads are staff; staff status must not open other projects' queues (was a hole in views_queue)."""
    world = build_world()
    outsider = world.api_client("outsider")
    assert outsider.get(f"/api/v1/projects/{world.project.slug}/tasks/next/").status_code == 404
    assert outsider.get(f"/api/v1/projects/{world.project.slug}/me/").status_code == 404
    assert not Assignment.objects.filter(annotator=world.users["outsider"]).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["outsider", "staff", "removed"])
def test_non_members_cannot_tell_a_project_exists(kind):
    """Was: pages answered 403 for an existing project and 404 for a missing one. Now pages and API
    answer a non-member the same 404 either way."""
    world = build_world()
    session, api = world.session_client(kind), world.api_client(kind)
    for path in ("/dashboard/{slug}/", "/annotate/{slug}/"):
        existing = session.get(path.format(slug=world.project.slug))
        missing = session.get(path.format(slug="no-such-project"))
        assert existing.status_code == missing.status_code == 404, path
    for path in ("/api/v1/projects/{slug}/tasks/next/", "/api/v1/projects/{slug}/stats/"):
        existing = api.get(path.format(slug=world.project.slug))
        missing = api.get(path.format(slug="no-such-project"))
        assert existing.status_code == missing.status_code == 404, path
        assert existing.json() == missing.json(), path
