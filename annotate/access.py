"""Who may do what in a project: one policy for the API, the pages and the assignment endpoints.

Every check reads the caller's *current* memberships from the database, so a member removed a
moment ago is refused on their very next call. The answers:
- not a member (a removed member included) and not a superuser: ProjectNotFound, as if the
  project did not exist (no slug leaks to non-members);
- a member without a role the action needs: ActionForbidden;
- superusers: every action except labeling, which needs a membership (a label carries its
  labeler's pseudonym, and the queue serves members only).
Staff status alone grants nothing: leads are staff for the Django admin and must still see only
their own projects. labeling_api.access turns the two refusals into DRF's 404/403, the pages
(annotate.pages) into Django's.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from annotate import queue_sql
from annotate.models import Assignment, Membership, Project, Role
from core.errors import Forbidden, NotFound

User = AbstractBaseUser | AnonymousUser

# action -> roles allowed (superusers always allowed, except MEMBERS_ONLY actions)
PROJECT_ACTIONS: dict[str, frozenset[str]] = {
    # the work queue, the workspace page and every assignment endpoint
    "label": frozenset({Role.ANNOTATOR, Role.LEAD}),
    "view_progress": frozenset({Role.ANNOTATOR, Role.LEAD, Role.ML_ENGINEER}),
    # the lead's dashboard page and its numbers (per-annotator quality is personal data)
    "dashboard": frozenset({Role.LEAD}),
    "stats": frozenset({Role.LEAD}),
    "export": frozenset({Role.LEAD, Role.ML_ENGINEER}),
    "import": frozenset({Role.LEAD}),
    # the model loop (labeling_api.views_ml)
    "retrain": frozenset({Role.LEAD, Role.ML_ENGINEER}),
    "view_models": frozenset({Role.LEAD, Role.ML_ENGINEER}),
    "activate_model": frozenset({Role.LEAD}),
    "score": frozenset({Role.LEAD, Role.ML_ENGINEER}),
    # running the project from the browser (annotate.views_manage)
    "settings": frozenset({Role.LEAD}),
    "members": frozenset({Role.LEAD}),
    # automatic labels (labeling_api.views_autolabel): never annotators (anchoring)
    "autolabel": frozenset({Role.LEAD}),
    "view_auto_labels": frozenset({Role.LEAD}),
}
MEMBERS_ONLY = frozenset({"label"})
# What a refusal says: plain words, never the action's internal name ("may activate_model").
ACTION_WORDS = {
    "label": "label",
    "view_progress": "see its progress",
    "dashboard": "open its dashboard",
    "stats": "read its statistics",
    "export": "export its data",
    "import": "import data",
    "retrain": "start training runs",
    "view_models": "see its training runs",
    "activate_model": "activate a model",
    "score": "score with its model",
    "settings": "change its settings",
    "members": "manage its members",
    "autolabel": "start automatic labeling",
    "view_auto_labels": "see its automatic labels",
}
ROLE_WORDS = {Role.ANNOTATOR: "annotators", Role.LEAD: "leads", Role.ML_ENGINEER: "ML engineers"}


def forbidden_message(action: str) -> str:
    """E.g. "Only the leads of this project can activate a model." """
    *others, last = [ROLE_WORDS[Role(role)] for role in sorted(PROJECT_ACTIONS[action])]
    names = f"{', '.join(others)} and {last}" if others else last
    return f"Only the {names} of this project can {ACTION_WORDS[action]}."


class ProjectNotFound(NotFound):
    """No such project, or the caller is not one of its members."""


class ActionForbidden(Forbidden):
    """A member without a role the action needs."""


def current_roles(*, user: User, project: Project) -> frozenset[str]:
    """The caller's roles in the project now (one query; none for anonymous callers)."""
    if not user.is_authenticated:
        return frozenset()
    return frozenset(Membership.objects.filter(user=user, project=project).values_list("role", flat=True))


def may(*, user: User, roles: frozenset[str] | set[str], action: str) -> bool:
    """The table's answer for a caller with `roles` (no query)."""
    if roles & PROJECT_ACTIONS[action]:
        return True
    return bool(user.is_authenticated and user.is_superuser and action not in MEMBERS_ONLY)


def _check(*, user: User, roles: frozenset[str], action: str) -> frozenset[str]:
    if not roles and not (user.is_authenticated and user.is_superuser):
        raise ProjectNotFound("No such project.")
    if not may(user=user, roles=roles, action=action):
        raise ActionForbidden(forbidden_message(action))
    return roles


def authorize(*, user: User, project: Project, action: str) -> frozenset[str]:
    """The caller's roles in `project` if they may do `action` there; raises ProjectNotFound for
    a non-member (superusers excepted), ActionForbidden for a member without the role."""
    return _check(user=user, roles=current_roles(user=user, project=project), action=action)


def project_and_roles(*, user: User, slug: str, action: str) -> tuple[Project, frozenset[str]]:
    """The project `slug` and the caller's roles in it, if they may do `action` there. One query
    for a member (the hot path of every claim); a non-member learns nothing, existing or not."""
    project, roles = queue_sql.memberships(user_id=user.pk, slug=slug) if user.is_authenticated else (None, [])
    if project is not None:
        return project, _check(user=user, roles=frozenset(roles), action=action)
    project = Project.objects.filter(slug=slug).first() if user.is_authenticated and user.is_superuser else None
    if project is None:
        raise ProjectNotFound("No such project.")
    return project, _check(user=user, roles=frozenset(), action=action)


def project_for(*, user: User, slug: str, action: str) -> Project:
    """The project `slug` if `user` may do `action` in it; raises ProjectNotFound / ActionForbidden."""
    return project_and_roles(user=user, slug=slug, action=action)[0]


def assignment_for(*, user: User, assignment_id: int) -> tuple[Assignment, frozenset[str]]:
    """One of the caller's own assignments, if they may still label in its project: ProjectNotFound
    for anyone but its annotator and for an annotator no longer a member, ActionForbidden for a
    member left without a labeling role. One query: the caller's current roles come with the row."""
    assignment, found = (
        queue_sql.own_assignment(assignment_id=assignment_id, user_id=user.pk) if user.is_authenticated else (None, [])
    )
    if assignment is None:
        raise ProjectNotFound("No such assignment of yours.")
    roles = frozenset(role for role in Role.values if role in found)
    try:
        return assignment, _check(user=user, roles=roles, action="label")
    except ProjectNotFound:
        raise ProjectNotFound("No such assignment of yours.") from None


def allowed_actions(*, user: AbstractBaseUser, roles: set[str]) -> set[str]:
    """The actions a member with `roles` may take: for links on pages."""
    return {action for action in PROJECT_ACTIONS if may(user=user, roles=roles, action=action)}
