"""Token authentication with its one query written once.

DRF's TokenAuthentication reads the token and its user with select_related("user").get(key=key);
every API call pays that query, and compiling it through the ORM cost more CPU than the claim's
own statements once those were raw (annotate.queue_sql). Same rows, same answers: 401 "Invalid
token." for an unknown key, "User inactive or deleted." for an inactive user. The key is
taken after `Token` or `Bearer`: many HTTP clients send a token as Bearer, and DRF's answer
to that ("credentials were not provided") sent people looking for the wrong fault.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from annotate.services import tokens
from core.rows import Reader, cursor


@cache
def _readers() -> tuple[Reader, Reader]:
    return Reader(Token, "t"), Reader(get_user_model(), "u")


def token_and_user(key: str) -> Token | None:
    """The token `key` with its user loaded (token.user), or None."""
    token, user = _readers()
    meta = get_user_model()._meta
    with cursor() as db:
        db.execute(
            f"SELECT {token.select}, {user.select} FROM {Token._meta.db_table} t "
            f"JOIN {meta.db_table} u ON u.{meta.pk.column} = t.user_id WHERE t.key = %(key)s",
            {"key": key},
        )
        row = db.fetchone()
    if row is None:
        return None
    found = token.build(row)
    found.user = user.build(row, token.width)
    return found


SCHEMES = (b"token", b"bearer")


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate(self, request):
        auth = authentication.get_authorization_header(request).split()
        if not auth or auth[0].lower() not in SCHEMES:
            return None
        if len(auth) != 2:
            raise exceptions.AuthenticationFailed(_("Invalid token header: give `Token <key>`, a key with no spaces."))
        try:
            key = auth[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed(_("Invalid token header: the key is not ASCII text.")) from None
        return self.authenticate_credentials(key)

    def authenticate_credentials(self, key):
        token = token_and_user(key)
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        expiry = tokens.expires_at(token)
        if expiry is not None and expiry <= timezone.now():
            raise exceptions.AuthenticationFailed(
                f"Token expired on {expiry:%Y-%m-%d %H:%M} UTC (tokens last API_TOKEN_MAX_AGE_DAYS days): "
                f"make a new one on your API token page, {reverse('account-token')}."
            )
        return (token.user, token)
