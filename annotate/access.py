"""Who may do what in a project: one policy for the API and the pages.

A caller who is not a member of the project is told it does not exist (no slug leaks to
non-members); a member without a role the action needs is refused; superusers may do everything.
Staff status alone grants nothing: leads are staff for the Django admin and must still see only
their own projects. labeling_api.access turns the two refusals into DRF's 404/403, the pages
(annotate.pages) into Django's.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from annotate import selectors
from annotate.models import Project, Role

# action -> roles allowed (superusers always allowed)
PROJECT_ACTIONS: dict[str, frozenset[str]] = {
    "export": frozenset({Role.LEAD, Role.ML_ENGINEER}),
    "import": frozenset({Role.LEAD}),
    "stats": frozenset({Role.LEAD}),
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


class ProjectNotFound(Exception):
    """No such project, or the caller is not one of its members."""


class ActionForbidden(Exception):
    """A member without a role the action needs."""


def project_for(*, user: AbstractBaseUser | AnonymousUser, slug: str, action: str) -> Project:
    """The project `slug` if `user` may do `action` in it; raises ProjectNotFound / ActionForbidden."""
    allowed = PROJECT_ACTIONS[action]
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise ProjectNotFound("No such project.")
    if user.is_superuser:
        return project
    roles = selectors.user_roles(user=user, project=project)
    if not roles:
        raise ProjectNotFound("No such project.")
    if not roles & allowed:
        names = " or ".join(sorted(allowed))
        raise ActionForbidden(f"Only a project's {names} may {action}.")
    return project


def allowed_actions(*, user: AbstractBaseUser, roles: set[str]) -> set[str]:
    """The actions a member with `roles` may take (every action for superusers): for links on pages."""
    if user.is_superuser:
        return set(PROJECT_ACTIONS)
    return {action for action, allowed in PROJECT_ACTIONS.items() if roles & allowed}
