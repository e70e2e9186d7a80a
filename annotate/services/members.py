"""Project membership and the labeler pseudonym every user carries into exports."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from annotate.models import LabelerProfile, Membership, Project, Role


@transaction.atomic
def add_member(*, project: Project, user: AbstractBaseUser, role: Role | str) -> tuple[Membership, bool]:
    """Give `user` `role` in `project` (idempotent); returns the membership and whether it is new.

    Also makes sure the user has a labeler pseudonym, so their first submit can be exported.
    """
    role = Role(role)  # ValueError on an unknown role
    labeler_uuid_for(user=user)
    return Membership.objects.get_or_create(project=project, user=user, role=role)


def labeler_uuid_for(*, user: AbstractBaseUser) -> str:
    """The user's stable pseudonymous labeler id (created on first use); never a name or e-mail."""
    profile, _ = LabelerProfile.objects.get_or_create(user=user)
    return str(profile.labeler_uuid)
