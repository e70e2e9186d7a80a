"""Which completions servers a job may call: the worker must not become a way into the network.

A job's base_url comes from a lead or ML engineer over the API, and the worker calls it from inside
the deployment. So an address that is not public (loopback, private, link-local such as a cloud
metadata service, reserved) is refused unless the deployment lists its host in
AUTOLABEL_ALLOWED_HOSTS (the model server on the same network: `localhost`, `vllm`, `10.0.0.5`,
`*.internal`; `*` allows every host). The check runs when a job is created, again when a
worker starts it, and on every connection the worker opens (`connect_checked`): the name is
resolved once there and the socket goes to the address that was checked, so a name that answers
a public address to the check and an inside one to the connection (DNS rebinding) gets nowhere.
The client follows no redirects and uses no proxy from the environment (autolabel.rollouts): a
public server cannot bounce a request inward, and no proxy resolves the name past the check.
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


# The resolver, one name for every lookup here (a test answers for a name of its own through it).
_resolve = socket.getaddrinfo


def _checked_addresses(host: str, port: int) -> list[tuple]:
    """getaddrinfo's answers for `host`, each a public address unless the host is listed."""
    try:
        found = _resolve(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise EndpointRefused(f"host {host!r} does not resolve from the server") from None
    if not _listed(host.lower()):
        for *_, sockaddr in found:
            ip = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])
            if not ip.is_global:
                raise EndpointRefused(
                    f"host {host!r} is a loopback, private or link-local address ({ip}); a model server inside "
                    "the deployment must be listed in the AUTOLABEL_ALLOWED_HOSTS setting"
                )
    return found


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
    _checked_addresses(host, port)


def connect_checked(
    address: tuple[str, int], timeout: float | None = None, source_address: tuple[str, int] | None = None
) -> socket.socket:
    """socket.create_connection for the worker's model-server client: the host is resolved once,
    its addresses checked as above, and the socket connected to one of those very addresses.
    EndpointRefused (not an OSError, so urllib passes it on unwrapped) when one is not allowed."""
    host, port = address
    error: OSError | None = None
    for family, kind, proto, _, sockaddr in _checked_addresses(host, port):
        sock = socket.socket(family, kind, proto)
        try:
            if isinstance(timeout, int | float):  # else http.client's "the default" marker
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            error = exc
    raise error or OSError(f"no address to connect to for {host!r}")
