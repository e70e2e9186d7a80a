"""Which completions servers a job may call: the worker must not become a way into the network.

A job's base_url comes from a lead or ML engineer over the API, and the worker calls it from inside
the deployment. So an address that is not public (loopback, private, link-local such as a cloud
metadata service, reserved) is refused unless the deployment lists its host in
AUTOLABEL_ALLOWED_HOSTS (the model server on the same network: `localhost`, `vllm`, `10.0.0.5`,
`*.internal`; `*` allows every host). The check runs when a job is created and again when a
worker starts it (DNS may have changed); the client follows no redirects (autolabel.rollouts), so
a public server cannot bounce a request inward.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings


class EndpointRefused(ValueError):
    """The base_url's host may not be called from here; the message says how to allow it."""


def _listed(host: str) -> bool:
    allowed = [entry.strip().lower() for entry in settings.AUTOLABEL_ALLOWED_HOSTS if entry.strip()]
    return any(entry == "*" or fnmatch.fnmatchcase(host, entry) for entry in allowed)


def check_base_url(base_url: str) -> None:
    """Raise EndpointRefused unless `base_url` names a public host or a listed one."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if not host:
        raise EndpointRefused(f"names no host: {base_url!r}")
    if _listed(host):
        return
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise EndpointRefused(f"has a bad port: {base_url!r}") from None
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}
    except (socket.gaierror, UnicodeError):
        raise EndpointRefused(f"host {host!r} does not resolve from the server") from None
    for address in sorted(addresses):
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if not ip.is_global:
            raise EndpointRefused(
                f"host {host!r} is a loopback, private or link-local address ({ip}); a model server inside the "
                "deployment must be listed in the AUTOLABEL_ALLOWED_HOSTS setting"
            )
