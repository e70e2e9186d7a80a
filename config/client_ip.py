"""The client's address for login lockouts (django-axes), read as the API's rate limits read it.

Behind TRUSTED_PROXIES reverse proxies that each append the address they saw to X-Forwarded-For,
the client is the entry that many from the right: what the outermost trusted proxy saw. Entries
left of it come from the client and are never read (a forged header cannot pick the lockout key).
With none (the default), it is REMOTE_ADDR. Behind a proxy without this, every login came from the
proxy's address, and five wrong passwords for a username locked that username out for everyone.
"""

from __future__ import annotations

from django.http import HttpRequest
from rest_framework.throttling import BaseThrottle


def client_ip(request: HttpRequest) -> str | None:
    # DRF's get_ident applies REST_FRAMEWORK["NUM_PROXIES"] (settings: TRUSTED_PROXIES): one rule for both.
    return BaseThrottle().get_ident(request) or None
