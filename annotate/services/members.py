"""Project membership and the labeler pseudonym every user carries into exports."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import Group, Permission
from django.db import transaction

from annotate.models import LabelerProfile, Membership, Project, Role

LEADS_GROUP = "Leads"
# Leads browse and correct data in the Django admin: every permission of these apps.
LEAD_ADMIN_APPS = ("annotate", "ml", "autolabel")


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
