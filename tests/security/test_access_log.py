"""gunicorn's access log (config/gunicorn.py) against a real gunicorn on the embedded default."""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request

from tests.embedded import ROOT, embedded_env, free_port, manage, wait_until_serving


def test_the_access_log_keeps_no_invite_secret(tmp_path):
    """Was: `GET /invite/<secret>/` went to the access log as it was asked, and again as the Referer
    of the invite page's own CSS and script: an invite link is a password to join a project for 7
    days, so whoever read the logs could use it before the person it was meant for."""
    env = embedded_env(tmp_path)
    manage(env, "migrate", "--noinput")
    secret = "S3cretInviteValue_abcdefghijklmnopqrstuvwx"
    port = free_port()
    argv = [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "--bind", f"127.0.0.1:{port}"]
    server = subprocess.Popen(
        [*argv, "--workers", "1"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/accounts/login/", timeout=60, process=server)
        invite = f"http://127.0.0.1:{port}/invite/{secret}/"
        for url, headers in ((invite, {}), (f"http://127.0.0.1:{port}/accounts/login/", {"Referer": invite})):
            try:
                urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10).close()
            except urllib.error.HTTPError:
                pass  # an unknown invite is a 404: its line is what matters
    finally:
        server.terminate()
        log = server.communicate(timeout=30)[0].decode(errors="replace")
    assert "GET /invite/<redacted>/ HTTP/1.1" in log, log
    assert f'"http://127.0.0.1:{port}/invite/<redacted>/"' in log, log  # the Referer
    assert secret not in log
