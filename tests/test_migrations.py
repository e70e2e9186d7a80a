"""The models and their migrations agree: a model change committed without its migration would
pass every test (pytest-django builds the test database from the migrations, not the models) and
then fail on a real database with a missing column."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_every_model_change_has_its_migration() -> None:
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit:
        pytest.fail(f"models changed without a migration (run manage.py makemigrations):\n{out.getvalue()}")
