"""Shared test fixtures. Tests run against real PostgreSQL and Redis (config.settings.test)."""

import os

# No usage report to huggingface.co: TRL's trainers send one from a thread of their own unless
# this is set before Hugging Face's libraries are first imported, and a test module that set
# HF_HUB_OFFLINE itself came too late when another had imported them first. (HF_HUB_OFFLINE is
# left to the code under test: the MiniLM featurizer must set it itself.)
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import pytest  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402


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
