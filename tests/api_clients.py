"""API clients for tests: a project member authenticated by a DRF token."""

from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotate.models import Membership, Project


def member_client(project: Project, name: str, role: str | None) -> APIClient:
    """A new user (a member with `role` when given) and a client carrying their token; `.user` is set."""
    user = get_user_model().objects.create_user(name, password="pw-steplabel-test")
    if role:
        Membership.objects.create(project=project, user=user, role=role)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    client.user = user
    return client
