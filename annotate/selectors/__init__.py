"""Read-only queries over the labeling domain."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from annotate.models import Membership, Project, Role


def projects_for_user(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.order_by("slug")
    return Project.objects.filter(memberships__user=user).distinct().order_by("slug")


def memberships_for_user(*, user: AbstractBaseUser) -> QuerySet[Membership]:
    return Membership.objects.filter(user=user).select_related("project").order_by("project__slug", "role")


def user_roles(*, user: AbstractBaseUser | AnonymousUser, project: Project) -> set[str]:
    if not user.is_authenticated:
        return set()
    return set(Membership.objects.filter(user=user, project=project).values_list("role", flat=True))


def has_role(*, user: AbstractBaseUser | AnonymousUser, project: Project, roles: set[Role] | set[str]) -> bool:
    return bool(user_roles(user=user, project=project) & {str(r) for r in roles})
