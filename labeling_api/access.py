"""Who may do what in a project, written once as data and enforced by the views.

A caller who is not a member of the project gets 404 (project slugs do not leak); a member
without a required role gets 403; superusers may do everything. Staff status alone grants
nothing here: leads are staff for the Django admin, and must still see only their projects.
"""

from django.http import Http404
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request

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
}


def project_for_action(request: Request, slug: str, action: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    user = request.user
    if project is None:
        raise Http404("No such project.")
    if user.is_superuser:
        return project
    roles = selectors.user_roles(user=user, project=project)
    if not roles:
        raise Http404("No such project.")
    allowed = PROJECT_ACTIONS[action]
    if not roles & allowed:
        names = " or ".join(sorted(allowed))
        raise PermissionDenied(f"Only a project's {names} may {action}.")
    return project
