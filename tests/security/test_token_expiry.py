"""API tokens expire when the operator says so (API_TOKEN_MAX_AGE_DAYS): an older token is a 401
that says it expired and where to make a new one; the token page says when it stops working.
Unset (0), tokens never expire, as before. Was: a token lived for ever in a script or a CI secret."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Membership, Project, Role
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def _token_made(days_ago: float) -> tuple[Token, APIClient]:
    user = make_user("mia")
    Membership.objects.create(project=Project.objects.create(slug="algebra"), user=user, role=Role.ML_ENGINEER)
    token = Token.objects.create(user=user)
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - timedelta(days=days_ago))
    token.refresh_from_db()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return token, api


@override_settings(API_TOKEN_MAX_AGE_DAYS=90)
def test_a_token_older_than_the_limit_is_refused_and_says_why():
    token, api = _token_made(days_ago=91)
    answer = api.get("/api/v1/projects/algebra/me/")
    assert answer.status_code == 401
    expiry = token.created + timedelta(days=90)
    assert answer.json()["detail"] == (
        f"Token expired on {expiry:%Y-%m-%d %H:%M} UTC (tokens last API_TOKEN_MAX_AGE_DAYS days): "
        "make a new one on your API token page, /account/token/."
    )


@override_settings(API_TOKEN_MAX_AGE_DAYS=90)
def test_a_younger_token_works_and_the_page_says_when_it_stops(client):
    token, api = _token_made(days_ago=89)
    assert api.get("/api/v1/projects/algebra/me/").status_code == 200
    client.force_login(token.user)
    page = client.get("/account/token/").content.decode()
    assert f"It stops working on {token.created + timedelta(days=90):%Y-%m-%d %H:%M} UTC" in page


@override_settings(API_TOKEN_MAX_AGE_DAYS=90)
def test_the_page_says_an_expired_token_expired_and_a_rotated_one_works_again(client):
    token, api = _token_made(days_ago=120)
    client.force_login(token.user)
    assert "It <strong>expired</strong> on" in client.get("/account/token/").content.decode()
    assert client.post("/account/token/", {"confirm": "yes"}).status_code == 302
    fresh = Token.objects.get(user=token.user)
    api.credentials(HTTP_AUTHORIZATION=f"Token {fresh.key}")
    assert api.get("/api/v1/projects/algebra/me/").status_code == 200


def test_without_a_limit_tokens_never_expire(client):
    token, api = _token_made(days_ago=3650)
    assert api.get("/api/v1/projects/algebra/me/").status_code == 200
    client.force_login(token.user)
    assert "sl-token-expiry" not in client.get("/account/token/").content.decode()
