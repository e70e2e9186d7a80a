"""A project's people, managed by its leads from the members page: add by username or e-mail,
remove, and one-time invite links: a new account, or an existing one joining with the link."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotate.models import Invite, Membership, Project, Role
from annotate.services import events
from annotate.services.members import add_member


class TeamError(ValueError):
    """A request the members page refuses, with a message for the lead."""


def find_user(identifier: str) -> AbstractBaseUser:
    """The one account this username (in any case) or e-mail address names.

    Refused when it could name two people: a username written in another case than two accounts
    use, or an address that is one account's username and another's e-mail (the lead meant one
    of them; adding the other would give a stranger the roles)."""
    identifier = identifier.strip()
    users = get_user_model().objects.filter(is_active=True)
    exact = users.filter(username=identifier).first()
    by_name = [exact] if exact is not None else list(users.filter(username__iexact=identifier)[:2])
    if len(by_name) > 1:
        raise TeamError(f"Several accounts are called {identifier} in other cases; enter the exact username.")
    by_email = list(users.filter(email__iexact=identifier)[:3]) if "@" in identifier else []
    found = {user.pk: user for user in [*by_name, *by_email]}
    if len(found) == 1:
        return next(iter(found.values()))
    if by_name and found:
        names = ", ".join(sorted(user.username for user in found.values()))
        raise TeamError(
            f"{identifier} is one account's username and another's e-mail address ({names}); enter the "
            "username of the person you mean."
        )
    if found:
        raise TeamError(f"Several accounts use {identifier}; enter the username instead.")
    raise TeamError(f"No account is called {identifier}. Send them an invite link instead.")


@transaction.atomic
def add_roles(*, project: Project, actor: AbstractBaseUser, identifier: str, roles: list[str]) -> list[str]:
    """Give the user `roles` in `project`; returns the roles that are new (audited)."""
    user = find_user(identifier)
    added = [str(role) for role in roles if add_member(project=project, user=user, role=role)[1]]
    if added:
        events.record(actor=actor, project=project, action="member.added", user=user.get_username(), roles=added)
    return added


def _removed(memberships: list[Membership], user_id: int, role: str | None) -> list[Membership]:
    """The memberships that removing the user (or only `role`) takes; refuses what must not go."""
    theirs = [m for m in memberships if m.user_id == user_id]
    if not theirs:
        raise TeamError("That person is not a member of this project.")
    if role is not None:
        theirs = [m for m in theirs if m.role == role]
        if not theirs:
            raise TeamError("That person does not have that role in this project.")
    leads = {m.user_id for m in memberships if m.role == Role.LEAD}
    if leads == {user_id} and any(m.role == Role.LEAD for m in theirs):
        raise TeamError("A project needs a lead: add another lead before removing the last one.")
    return theirs


def removal(*, project: Project, user_id: int, role: str | None = None) -> dict:
    """What removing the user (or only `role`) would take, for the page that asks the lead to
    confirm: the user and the role names. Raises TeamError at once for a removal that would be refused."""
    memberships = list(Membership.objects.filter(project=project).select_related("user").order_by("role"))
    theirs = _removed(memberships, user_id, role)
    return {"user": theirs[0].user, "roles": [m.get_role_display() for m in theirs]}


@transaction.atomic
def remove_member(*, project: Project, actor: AbstractBaseUser, user_id: int, role: str | None = None) -> str:
    """Take every role in `project` from the user, or only `role`; a project always keeps one lead."""
    theirs = _removed(list(Membership.objects.select_for_update().filter(project=project)), user_id, role)
    username = theirs[0].user.get_username()
    Membership.objects.filter(pk__in=[m.pk for m in theirs]).delete()
    events.record(
        actor=actor, project=project, action="member.removed", user=username, roles=sorted(m.role for m in theirs)
    )
    return username


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@transaction.atomic
def create_invite(*, project: Project, actor: AbstractBaseUser, roles: list[str]) -> tuple[Invite, str]:
    """A one-time invite; returns it and its secret (shown once to the lead, only its hash is kept)."""
    roles = [str(Role(role)) for role in roles]
    secret = secrets.token_urlsafe(32)
    invite = Invite.objects.create(
        project=project,
        roles=roles,
        token_hash=_hash(secret),
        created_by=actor,
        expires_at=timezone.now() + timedelta(days=settings.INVITE_MAX_AGE_DAYS),
    )
    events.record(actor=actor, project=project, action="invite.created", invite=invite.pk, roles=roles)
    return invite, secret


def open_invite(secret: str) -> Invite | None:
    """The unused, unexpired invite with this secret, or None."""
    return (
        Invite.objects.select_related("project")
        .filter(token_hash=_hash(secret), used_at__isnull=True, expires_at__gt=timezone.now())
        .first()
    )


def _lock_open_invite(secret: str) -> Invite:
    """The unused, unexpired invite with this secret, locked for the caller's transaction."""
    invite = (
        Invite.objects.select_for_update()
        .select_related("project")
        .filter(token_hash=_hash(secret), used_at__isnull=True, expires_at__gt=timezone.now())
        .first()
    )
    if invite is None:
        raise TeamError("This invite link has been used or has expired. Ask the project's lead for a new one.")
    return invite


def _use_up(invite: Invite, user: AbstractBaseUser, **details) -> None:
    invite.used_at = timezone.now()
    invite.used_by = user
    invite.save(update_fields=["used_at", "used_by"])
    events.record(
        actor=user,
        project=invite.project,
        action="invite.accepted",
        invite=invite.pk,
        user=user.get_username(),
        roles=invite.roles,
        **details,
    )


@transaction.atomic
def accept_invite(*, secret: str, username: str, password: str, email: str = "") -> AbstractBaseUser:
    """Create the invitee's account with the given roles; the invite is then used up."""
    invite = _lock_open_invite(secret)
    user = get_user_model().objects.create_user(username=username, email=email, password=password)
    for role in invite.roles:
        add_member(project=invite.project, user=user, role=role)
    _use_up(invite, user)
    return user


@dataclass(frozen=True, slots=True)
class Joined:
    project: Project
    added: list[str]  # the invite's roles the user did not hold yet (none: the link stays unused)


@transaction.atomic
def join_with_invite(*, secret: str, user: AbstractBaseUser) -> Joined:
    """An existing account takes the invite's roles. The invite is used up only when it gives the
    user a role they lacked: a member who opens a link meant for someone else leaves it working."""
    invite = _lock_open_invite(secret)
    added = [role for role in invite.roles if add_member(project=invite.project, user=user, role=role)[1]]
    if added:
        _use_up(invite, user, existing_account=True)
    return Joined(project=invite.project, added=added)


@transaction.atomic
def revoke_invite(*, project: Project, actor: AbstractBaseUser, invite_id: int) -> None:
    updated = Invite.objects.filter(project=project, pk=invite_id, used_at__isnull=True).update(
        expires_at=timezone.now()
    )
    if not updated:
        raise TeamError("That invite is already used or gone.")
    events.record(actor=actor, project=project, action="invite.revoked", invite=invite_id)
