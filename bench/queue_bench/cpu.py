"""CPU time by role during a measured window, read from /proc: the web server (gunicorn's process
tree), PostgreSQL's processes and the load-generating clients. On one small machine all three share
the cores, so throughput alone cannot say what a dedicated server would do; CPU ms per submit can."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[str, int, float] | None:
    """(command name, parent pid, utime + stime in seconds) of a live process, else None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = raw[raw.index("(") + 1 : raw.rindex(")")]
    fields = raw[raw.rindex(")") + 2 :].split()
    return name, int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def _snapshot() -> dict[int, tuple[str, int, float]]:
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None:
            out[int(entry)] = st
    return out


def _tree(snapshot: dict, roots: set[int]) -> set[int]:
    pids, grew = set(roots), True
    while grew:
        more = {pid for pid, (_, ppid, _) in snapshot.items() if ppid in pids and pid not in pids}
        pids |= more
        grew = bool(more)
    return pids & set(snapshot)


def cpu_by_role(*, server_pid: int, client_pids: set[int]) -> dict[str, float]:
    """CPU seconds consumed so far by each role's live processes."""
    snap = _snapshot()
    roles = {
        "server": _tree(snap, {server_pid}),
        "postgres": {pid for pid, (name, _, _) in snap.items() if name == "postgres"},
        "clients": _tree(snap, client_pids),
    }
    return {role: sum(snap[pid][2] for pid in pids) for role, pids in roles.items()}


class WindowSampler(threading.Thread):
    """Samples cpu_by_role at `start` and `stop` (epoch seconds); `.used` is the difference."""

    def __init__(self, *, start: float, stop: float, server_pid: int, client_pids: set[int]):
        super().__init__(daemon=True)
        self.start_at, self.stop_at = start, stop
        self.server_pid, self.client_pids = server_pid, client_pids
        self.used: dict[str, float] = {}

    def run(self) -> None:
        time.sleep(max(0.0, self.start_at - time.time()))
        before = cpu_by_role(server_pid=self.server_pid, client_pids=self.client_pids)
        time.sleep(max(0.0, self.stop_at - time.time()))
        after = cpu_by_role(server_pid=self.server_pid, client_pids=self.client_pids)
        self.used = {role: round(after[role] - before[role], 2) for role in before}
