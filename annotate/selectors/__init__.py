"""Read-only queries over the labeling domain."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from annotate.models import ImportJob, Membership, Project, Role


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


def roles_by_project(*, user: AbstractBaseUser) -> dict[int, list[str]]:
    """The user's roles in each of their projects (one query)."""
    roles: dict[int, list[str]] = {}
    for project_id, role in Membership.objects.filter(user=user).values_list("project_id", "role"):
        roles.setdefault(project_id, []).append(role)
    return roles


def exports_of(*, project: Project, user: AbstractBaseUser, limit: int = 100) -> QuerySet:
    """The user's export jobs in the project, newest first."""
    from annotate.models import Export

    return Export.objects.filter(project=project, requested_by=user).order_by("-id")[:limit]


def export_by_id(*, export_id: int):
    """The export job with its project, or None."""
    from annotate.models import Export

    return Export.objects.select_related("project").filter(pk=export_id).first()


def job_project_ids(*, user: AbstractBaseUser) -> QuerySet:
    """Ids of the projects whose background jobs the user may see (lead / ml_engineer; all for superusers)."""
    projects = Project.objects.all()
    if not user.is_superuser:
        projects = projects.filter(memberships__user=user, memberships__role__in=[Role.LEAD, Role.ML_ENGINEER])
    return projects.values("pk")


def waiting_exports(*, project_ids) -> int:
    """Export jobs not yet started in these projects."""
    from annotate.models import Export
    from core.models import JobStatus

    return Export.objects.filter(project__in=project_ids, status=JobStatus.CREATED).count()


def imports_of(*, project: Project, limit: int = 100) -> QuerySet:
    """The project's import jobs, newest first (every lead's: they share the project's data)."""
    return ImportJob.objects.select_related("project").filter(project=project).order_by("-id")[:limit]


def import_job(*, project: Project, job_id: int) -> ImportJob | None:
    """One import job of the project (the data page and scripts poll it)."""
    return ImportJob.objects.select_related("project").filter(project=project, pk=job_id).first()
