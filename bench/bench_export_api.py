"""The export API under a real server: streamed throughput, first byte, server memory; and as a job.

    .venv/bin/python bench/bench_export_api.py [--records 100000]

Generates and imports PRM800K-shape records (bench_import_export's generator) into a fresh
PostgreSQL database, starts gunicorn (1 sync worker) and a Celery worker on it, then:
  - streams GET /api/v1/projects/bench/export/ with requests, timing the first byte and the whole
    body, while sampling the gunicorn worker's RSS every 50 ms;
  - starts the same export as a job (POST /exports/), polls it to success and downloads the file.
Writes bench/results/export_api.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_import_export import ROOT, _reset_database, generate  # noqa: E402

RESULTS = ROOT / "bench" / "results"
DB = "steplabel_bench_export"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return 0.0


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=ROOT / "var" / "bench")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB}",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/14",
        "MEDIA_ROOT": str(args.workdir / "media"),
        "DEBUG": "false",
    }
    source = args.workdir / f"records_{args.records}.jsonl"
    if not source.exists():
        generate(source, args.records)
    size_mb = source.stat().st_size / 1e6
    _reset_database(env, DB)
    manage = [sys.executable, "manage.py"]
    subprocess.run(
        [*manage, "import_prm800k", str(source), "--project", "bench", "--no-progress"],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    subprocess.run(
        [*manage, "add_member", "--project", "bench", "--user", "bench-ml", "--role", "ml_engineer", "--create-user"],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    token = subprocess.run(
        [*manage, "drf_create_token", "bench-ml"], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout.split()[2]
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1", "--timeout", "600"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            "default",
            "--concurrency",
            "1",
            "-l",
            "WARNING",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/api/v1"
    headers = {"Authorization": f"Token {token}"}
    try:
        for _ in range(100):
            try:
                requests.get(f"{base}/projects/", headers=headers, timeout=30)
                break
            except requests.RequestException:
                time.sleep(0.5)
        requests.get(f"{base}/projects/bench/export/?generation=999", headers=headers, timeout=60).raise_for_status()
        gunicorn_worker = _children(server.pid)[0]
        idle_rss = _rss_mb(gunicorn_worker)
        peak = [idle_rss]
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], _rss_mb(gunicorn_worker))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.perf_counter()
        received = lines = 0
        first_byte = None
        with requests.get(
            f"{base}/projects/bench/export/?format=prm800k", headers=headers, stream=True, timeout=600
        ) as r:
            r.raise_for_status()
            for chunk in r.iter_content(1 << 16):
                if first_byte is None:
                    first_byte = time.perf_counter() - start
                received += len(chunk)
                lines += chunk.count(b"\n")
        stream_s = time.perf_counter() - start
        stop.set()
        sampler.join()
        identical_size = received == source.stat().st_size

        job_start = time.perf_counter()
        job = requests.post(
            f"{base}/projects/bench/exports/", json={"format": "prm800k"}, headers=headers, timeout=60
        ).json()
        while True:
            state = requests.get(f"{base}/exports/{job['id']}/", headers=headers, timeout=60).json()
            if state["status"] in ("succeeded", "failed"):
                break
            time.sleep(0.5)
        job_s = time.perf_counter() - job_start
        download = (
            requests.get(state["download_url"], headers=headers, timeout=600).content if state["download_url"] else b""
        )
    finally:
        for proc in (server, worker):
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)

    row = {
        "records": args.records,
        "mb": round(size_mb, 1),
        "lines": lines,
        "stream_s": round(stream_s, 1),
        "stream_mb_per_s": round(received / 1e6 / stream_s, 1),
        "first_byte_ms": round((first_byte or 0) * 1000),
        "server_rss_idle_mb": round(idle_rss),
        "server_rss_peak_mb": round(peak[0]),
        "server_rss_growth_mb": round(peak[0] - idle_rss),
        "same_bytes_as_source": identical_size,
        "job_status": state["status"],
        "job_s": round(job_s, 1),
        "job_mb_per_s": round(state.get("byte_size", 0) / 1e6 / job_s, 1),
        "job_file_equals_stream": len(download) == received,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "export_api.json").write_text(json.dumps(row, indent=2) + "\n")
    md = [
        "# Export API (gunicorn, 1 sync worker, PostgreSQL, 2 cores)",
        "",
        "Targets: >= 20 MB/s streamed, server memory growth < 100 MB, first byte < 200 ms.",
        "",
        "| " + " | ".join(row) + " |",
        "|" + "---|" * len(row),
        "| " + " | ".join(str(v) for v in row.values()) + " |",
        "",
    ]
    (RESULTS / "export_api.md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
