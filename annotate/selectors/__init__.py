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


def home_rows(*, user: AbstractBaseUser) -> list[dict]:
    """The home page's table: each of the user's projects (every project for superusers) with the
    user's roles and its progress (solutions done of all, labels submitted), in two grouped queries."""
    from django.db.models import Count, Q

    from annotate.models import Annotation, Solution

    projects = list(projects_for_user(user=user))
    roles: dict[int, set[str]] = {}
    for project_id, role in Membership.objects.filter(user=user).values_list("project_id", "role"):
        roles.setdefault(project_id, set()).add(role)
    ids = [p.pk for p in projects]
    solutions = {
        row["project"]: row
        for row in Solution.objects.filter(project_id__in=ids)
        .values("project")
        .annotate(total=Count("id"), done=Count("id", filter=Q(is_open=False)))
    }
    labels = dict(
        Annotation.objects.filter(project_id__in=ids)
        .values("project")
        .annotate(n=Count("id"))
        .values_list("project", "n")
    )
    rows = []
    for project in projects:
        counts = solutions.get(project.pk, {"total": 0, "done": 0})
        total, done = counts["total"], counts["done"]
        rows.append(
            {
                "project": project,
                "roles": sorted(roles.get(project.pk, set())),
                "solutions": total,
                "done": done,
                "labels": labels.get(project.pk, 0),
                "percent": round(100 * done / total) if total else 0,
            }
        )
    return rows
