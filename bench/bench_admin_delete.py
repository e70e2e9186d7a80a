"""Deleting in the admin at scale: a superuser's project deletion, confirmation page and POST.

    .venv/bin/python bench/bench_admin_delete.py [--steps 2000,20000,100000] [--runs 3]

A project of N steps (N/10 solutions of 10 steps, one training run scoring every step) on
PostgreSQL (database steplabel_bench_admin_delete, rebuilt). For each size, Django's own path
(the confirmation lists every row, loaded by its collector, and the audit event counts what goes
with the project with the same collector) against ours (`annotate/cascade.py`: counts in SQL, a
confirmation by counts above 500 rows). GET: the confirmation page, `--runs` times (median, max);
POST: the deletion itself, once per path on a fresh copy. Writes bench/results/admin_delete.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_import_export import ROOT, _reset_database  # noqa: E402

RESULTS = ROOT / "bench" / "results"
DB = "steplabel_bench_admin_delete"


def _setup() -> None:
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB}",
        "DEBUG": "false",
        "ALLOWED_HOSTS": "testserver",
    }
    os.environ.update(env)
    _reset_database({**os.environ}, DB)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _project(steps: int):
    from annotate.models import Problem, Project, Solution, Step
    from ml.models import StepScore, TrainingRun

    project = Project.objects.create(slug=f"p{uuid.uuid4().hex[:8]}")
    problem = Problem.objects.create(project=project, content_hash="p", text="q", ground_truth_answer="1")
    solutions = Solution.objects.bulk_create(
        Solution(project=project, problem=problem, content_hash=uuid.uuid4().hex, n_steps=10, final_answer="1")
        for _ in range(steps // 10)
    )
    rows = Step.objects.bulk_create(
        (Step(solution=s, index=i, text="t") for s in solutions for i in range(10)), batch_size=5000
    )
    run = TrainingRun.objects.create(project=project, status="succeeded")
    StepScore.objects.bulk_create(
        (
            StepScore(step=st, training_run=run, p_positive=0.5, p_neutral=0.3, p_negative=0.2, uncertainty=1.0)
            for st in rows
        ),
        batch_size=5000,
    )
    return project


class _DjangosPath:
    """Django's own behaviour: every deletion listed row by row, the audit counts by its collector."""

    def __enter__(self):
        import annotate.admin.audited as audited
        import annotate.admin_scope as scope
        from annotate.cascade import NotCountable

        def refuse(_queryset):
            raise NotCountable("bench: Django's collector")

        self.saved = (scope.LISTED_DELETIONS, audited.cascade_counts)
        scope.LISTED_DELETIONS, audited.cascade_counts = 10**12, refuse
        return self

    def __exit__(self, *exc):
        import annotate.admin.audited as audited
        import annotate.admin_scope as scope

        scope.LISTED_DELETIONS, audited.cascade_counts = self.saved


def _measure(client, steps: int, runs: int) -> dict:
    project = _project(steps)
    url = f"/admin/annotate/project/{project.pk}/delete/"
    gets, size = [], 0
    for _ in range(runs):
        t = time.perf_counter()
        response = client.get(url)
        gets.append(time.perf_counter() - t)
        assert response.status_code == 200, response.status_code
        size = len(response.content)
    t = time.perf_counter()
    response = client.post(url, {"post": "yes"})
    post = time.perf_counter() - t
    assert response.status_code == 302, response.status_code
    return {"get_median_s": statistics.median(gets), "get_max_s": max(gets), "page_bytes": size, "post_s": post}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", default="2000,20000,100000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    _setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.create_superuser("bench", "bench@example.com", "pw"))
    rows = []
    for steps in (int(s) for s in args.steps.split(",")):
        with _DjangosPath():
            before = _measure(client, steps, args.runs)
        after = _measure(client, steps, args.runs)
        rows.append({"steps": steps, "django": before, "steplabel": after})
        print(steps, before, after, flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "admin_delete.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = [
        "# Deleting a project in the admin (superuser), Django's listing vs counts in SQL",
        "",
        "`bench/bench_admin_delete.py`: a project of N steps (N/10 solutions, one training run scoring every step) on",
        f"PostgreSQL, this 2-core machine; GET = the confirmation page ({args.runs} runs: median, max), POST = the",
        "deletion (once). Django's path lists every row and counts the audit event's `with` by its collector; ours",
        "counts in SQL (`annotate/cascade.py`) and confirms by counts above 500 rows.",
        "",
        "| steps | GET Django (s) | GET ours (s) | ratio | page Django | page ours "
        "| POST Django (s) | POST ours (s) | ratio |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        d, s = row["django"], row["steplabel"]
        get_ratio, post_ratio = d["get_median_s"] / s["get_median_s"], d["post_s"] / s["post_s"]
        lines.append(
            f"| {row['steps']:,} | {d['get_median_s']:.2f} (max {d['get_max_s']:.2f}) | {s['get_median_s']:.3f} "
            f"(max {s['get_max_s']:.3f}) | {get_ratio:.0f}x | {d['page_bytes'] / 1e6:.1f} MB "
            f"| {s['page_bytes'] / 1e3:.0f} kB | {d['post_s']:.2f} | {s['post_s']:.2f} | {post_ratio:.1f}x |"
        )
    (RESULTS / "admin_delete.md").write_text("\n".join(lines) + "\n")
    print((RESULTS / "admin_delete.md").read_text())


if __name__ == "__main__":
    main()
