"""API tokens from the browser: a user creates (or rotates) their one DRF token and sees it once."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
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


def expires_at(token: Token) -> datetime | None:
    """When `token` stops working (API_TOKEN_MAX_AGE_DAYS after it was made), or None: it never does.
    A token that lives for ever in a script or a CI secret outlasts the person's need for it."""
    days = settings.API_TOKEN_MAX_AGE_DAYS
    return token.created + timedelta(days=days) if days > 0 else None
