"""Changing a password is no way around the login lockout.

Each password page (the site's /account/password/, Django's /accounts/password_change/ and the
admin's) asked for the old password and answered "incorrect" as often as anyone asked: with a
session left open, guesses ran unthrottled until one matched, and that password then opened the
account after the session ended. Now a wrong old password counts as a failed login for that
username and address (django-axes), and the fifth locks the pair on every page, login included.
"""

import pytest
from django.test import Client, override_settings

from annotate.models import Role
from tests.factories import make_project, make_user

pytestmark = pytest.mark.django_db

PASSWORD = "pw-steplabel-test"
NEW = "Zq7-a-new-passphrase"


def _change(client: Client, url: str, old: str):
    return client.post(url, {"old_password": old, "new_password1": NEW, "new_password2": NEW})


@override_settings(AXES_FAILURE_LIMIT=5)
@pytest.mark.parametrize("url", ["/account/password/", "/accounts/password_change/", "/admin/password_change/"])
def test_wrong_old_passwords_lock_the_account_as_failed_logins_do(url):
    user = make_user("guessed", project=make_project("guesses"), role=Role.LEAD)
    user.set_password(PASSWORD)
    user.is_staff = True  # the admin's page is for staff
    user.save()
    client = Client(REMOTE_ADDR="10.0.0.9")
    client.force_login(user)

    for n in range(4):
        response = _change(client, url, f"wrong-{n}")
        assert response.status_code == 200 and b"Your old password was entered incorrectly" in response.content
    assert _change(client, url, "wrong-4").status_code == 429
    # Locked now, even for the right old password, and the password stays as it was.
    assert _change(client, url, PASSWORD).status_code == 429
    user.refresh_from_db()
    assert user.check_password(PASSWORD)
    # The same pair is locked at the login page too: the guesses were failed logins.
    login = Client(REMOTE_ADDR="10.0.0.9").post("/accounts/login/", {"username": "guessed", "password": PASSWORD})
    assert login.status_code == 429


@override_settings(AXES_FAILURE_LIMIT=5)
@pytest.mark.parametrize("url", ["/account/password/", "/accounts/password_change/", "/admin/password_change/"])
def test_the_right_old_password_still_changes_it(url):
    user = make_user("changer", project=make_project("changes"), role=Role.LEAD)
    user.set_password(PASSWORD)
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    assert _change(client, url, "wrong").status_code == 200
    assert _change(client, url, PASSWORD).status_code == 302
    user.refresh_from_db()
    assert user.check_password(NEW)
