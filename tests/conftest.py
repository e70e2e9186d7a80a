"""Shared test fixtures. Tests run against real PostgreSQL and Redis (config.settings.test)."""

import pytest
from django.contrib.auth import get_user_model


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-steplabel")


@pytest.fixture
def admin_client_pg(client, superuser):
    """A test client logged in as a staff superuser."""
    client.force_login(superuser)
    return client


@pytest.fixture(autouse=True)
def _media_root_in_tmp(settings, tmp_path):
    """Uploads (import jobs) and export files of a test go to its own temporary folder, not var/media."""
    settings.MEDIA_ROOT = tmp_path / "media"
