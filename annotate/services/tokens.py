"""API tokens from the browser: a user creates (or rotates) their one DRF token and sees it once."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from rest_framework.authtoken.models import Token

from annotate.services import events


def current_token(*, user: AbstractBaseUser) -> Token | None:
    return Token.objects.filter(user=user).first()


@transaction.atomic
def issue_token(*, user: AbstractBaseUser) -> str:
    """A new token for `user`, replacing (and so revoking) any earlier one; returns its key."""
    rotated = Token.objects.filter(user=user).delete()[0] > 0
    token = Token.objects.create(user=user)
    events.record(actor=user, action="token.rotated" if rotated else "token.created")
    return token.key
