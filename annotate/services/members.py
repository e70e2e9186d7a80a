"""Project membership and the labeler pseudonym every user carries into exports."""

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import Group, Permission
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils import timezone

from annotate.models import Assignment, AssignmentStatus, LabelerProfile, Membership, Project, Role

LEADS_GROUP = "Leads"
# Leads browse and correct data in the Django admin: every permission of these apps.
LEAD_ADMIN_APPS = ("annotate", "ml", "autolabel")
LABELING_ROLES = (Role.ANNOTATOR, Role.LEAD)


@transaction.atomic
def add_member(*, project: Project, user: AbstractBaseUser, role: Role | str) -> tuple[Membership, bool]:
    """Give `user` `role` in `project` (idempotent); returns the membership and whether it is new.

    Also makes sure the user has a labeler pseudonym, so their first submit can be exported, and
    lets a lead into the admin.
    """
    role = Role(role)  # ValueError on an unknown role
    labeler_uuid_for(user=user)
    if role == Role.LEAD:
        grant_lead_admin(user=user)
    return Membership.objects.get_or_create(project=project, user=user, role=role)


def release_leases_unless_labeler(*, project_id: int, user_id: int) -> int:
    """Expire the user's active assignments in the project when they may no longer label there
    (drafts stay on the rows); returns how many were released."""
    if Membership.objects.filter(project_id=project_id, user_id=user_id, role__in=LABELING_ROLES).exists():
        return 0
    return Assignment.objects.filter(
        project_id=project_id, annotator_id=user_id, status=AssignmentStatus.ACTIVE
    ).update(status=AssignmentStatus.EXPIRED, lease_expires_at=timezone.now(), updated_at=timezone.now())


@receiver(post_delete, sender=Membership, dispatch_uid="annotate.release_leases_on_delete")
@receiver(post_save, sender=Membership, dispatch_uid="annotate.release_leases_on_save")
def _membership_changed(sender, instance: Membership, created: bool = False, **kwargs) -> None:
    if created:  # a new membership takes no role away
        return
    # However a membership goes or changes role (this service, the admin, a cascade), a user left
    # without a labeling role holds no lease, and one who leads no project any more leaves the admin.
    release_leases_unless_labeler(project_id=instance.project_id, user_id=instance.user_id)
    withdraw_lead_admin_unless_lead(user_id=instance.user_id)


def labeler_uuid_for(*, user: AbstractBaseUser) -> str:
    """The user's stable pseudonymous labeler id (created on first use); never a name or e-mail."""
    profile, _ = LabelerProfile.objects.get_or_create(user=user)
    return str(profile.labeler_uuid)


@transaction.atomic
def grant_lead_admin(*, user: AbstractBaseUser) -> None:
    """Staff status plus the Leads group, which holds every permission of the domain apps."""
    group, _ = Group.objects.get_or_create(name=LEADS_GROUP)
    group.permissions.add(*Permission.objects.filter(content_type__app_label__in=LEAD_ADMIN_APPS))
    user.groups.add(group)
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])


def withdraw_lead_admin_unless_lead(*, user_id: int) -> bool:
    """Undo grant_lead_admin once the user leads no project: out of the Leads group, and no longer
    staff, which only the lead role grants here. Never for a superuser; staff status stays too when
    the user has permissions of their own or through another group (made staff for another reason
    in the admin; the Project creators group holds none). Returns whether anything was withdrawn.
    Plain queryset statements, so it also runs while the user's deletion cascades to memberships."""
    if Membership.objects.filter(user_id=user_id, role=Role.LEAD).exists():
        return False
    User = get_user_model()
    groups, permissions = User.groups.through.objects, User.user_permissions.through.objects
    ordinary = {"user_id": user_id, "user__is_superuser": False}
    left = groups.filter(**ordinary, group__name=LEADS_GROUP).delete()[0]
    other_group = groups.filter(user_id=OuterRef("pk"), group__permissions__isnull=False)
    own_permission = permissions.filter(user_id=OuterRef("pk"))
    staff = User.objects.filter(pk=user_id, is_superuser=False, is_staff=True)
    unstaffed = staff.filter(~Exists(other_group), ~Exists(own_permission)).update(is_staff=False)
    return bool(left or unstaffed)
