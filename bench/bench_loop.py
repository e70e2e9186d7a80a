"""The model loop inside the app, end to end on PostgreSQL: a retrain and a rescoring at scale.

    .venv/bin/python bench/bench_loop.py [--labeled-steps 100000] [--open-steps 1000000]

Builds a fresh database (steplabel_bench_loop): `labeled-steps` rated steps in PRM800K phase-2
annotations (generated solutions with a planted error pattern, ml.prm.synthetic; every step up to
the first error rated) and `open-steps` unlabeled steps in open solutions of 10 steps. Then runs
`ml.tasks.featurize_steps`' body once (what a worker does after an import: every step's features
into the disk store), then `ml.services.run_training` with the default PRMConfig (hashed n-gram
featurizer) -- it builds examples from the annotations, trains, writes the checkpoint, scores every
open step, activates and rewrites the queue priorities -- and then `ml.services.rescore_project`
alone (what a rollback does), with and without the optional per-step score record
(ML_STORE_STEP_SCORES). Targets (issue 14, with cached step features): a retrain on 100,000 labeled
steps in under 30 s, rescoring 1,000,000 steps in under 15 s. Writes bench/results/loop.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DB = "steplabel_bench_loop"
OPEN_STEPS_PER_SOLUTION = 10
TRAIN_TARGET_S = 30.0
RESCORE_TARGET_S = 15.0


def _psql(sql: str, db: str = "postgres") -> None:
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-qc", sql], check=True)


def _fill(*, labeled_steps: int, open_steps: int) -> dict[str, float]:
    import numpy as np
    from django.db import connection
    from queue_bench.loading import insert_select

    from annotate.models import Annotation, Problem, Project, Solution, Step, Strategy
    from core.bulk_insert import insert_rows
    from ml.prm.synthetic import planted_solutions
    from prm800k.labels import label_counters
    from prm800k.records import dumps_label_steps

    t0 = time.perf_counter()
    project = Project.objects.create(slug="bench", selection_strategy=Strategy.MIX, retrain_every=0)
    # Labeled: generated solutions, rated up to the first error (PRM800K phase 2).
    sols, rated, batch = [], 0, 0
    while rated < labeled_steps:
        for pid, text, steps, fe, ok in planted_solutions(2000, seed=batch):
            sols.append((f"{batch}-{pid}", text, steps, fe, ok))
            rated += (fe + 1) if fe >= 0 else len(steps)
            if rated >= labeled_steps:
                break
        batch += 1
    pids = sorted({s[0] for s in sols})
    texts = {s[0]: s[1] for s in sols}
    problem_ids = insert_rows(
        Problem, [{"project_id": project.pk, "text": texts[p], "content_hash": p, "text_hash": p} for p in pids]
    )
    problem_of = dict(zip(pids, problem_ids, strict=True))
    solution_ids = insert_rows(
        Solution,
        [
            {
                "project_id": project.pk,
                "problem_id": problem_of[pid],
                "content_hash": f"l{n}",
                "n_steps": len(steps),
                "answer_correct": ok,
                "is_open": False,
                "annotation_count": 1,
            }
            for n, (pid, _t, steps, _fe, ok) in enumerate(sols)
        ],
    )
    insert_rows(
        Step,
        [
            {"solution_id": sid, "index": i, "text": t}
            for sid, (_p, _t, steps, _fe, _ok) in zip(solution_ids, sols, strict=True)
            for i, t in enumerate(steps)
        ],
    )
    annotations = []
    for sid, (_p, _t, steps, fe, _ok) in zip(solution_ids, sols, strict=True):
        last = len(steps) - 1 if fe < 0 else fe
        label = [
            {
                "completions": [{"text": steps[i], "rating": -1 if i == fe else 1, "flagged": False}],
                "human_completion": None,
                "chosen_completion": None if i == fe else 0,
            }
            for i in range(last + 1)
        ]
        annotations.append(
            {
                "project_id": project.pk,
                "solution_id": sid,
                "labeler_uuid": "bench",
                "source": "import",
                "submitted_at": "2026-01-01T00:00:00+00:00",
                "finish_reason": "found_error" if fe >= 0 else "solution",
                "label_steps": dumps_label_steps(label),
                **label_counters(label),
            }
        )
    insert_rows(Annotation, annotations)
    t_labeled = time.perf_counter() - t0

    # Open: solutions of 10 steps whose texts come from a pool of generated steps (made unique).
    t1 = time.perf_counter()
    pool = [s for _p, _t, steps, _fe, _ok in planted_solutions(3000, seed=10**6) for s in steps]
    n_open = open_steps // OPEN_STEPS_PER_SOLUTION
    rng = np.random.default_rng(0)
    with connection.cursor() as cur:
        cur.execute("CREATE TEMP TABLE pool (id int PRIMARY KEY, text text)")
        with cur.cursor.copy("COPY pool (id, text) FROM STDIN") as copy:
            for i, t in enumerate(pool):
                copy.write_row([i, t])
        # every other column from the model's defaults (insert_select), so new columns need no edit here
        insert_select(
            cur,
            Solution,
            {
                "project": "%(project)s",
                "problem": "(%(problems)s::bigint[])[1 + g %% %(n_problems)s]",
                "answer_correct": "g %% 3 <> 0",
                "is_pregenerated": "true",
                "content_hash": "'o' || g",
                "n_steps": "%(steps)s",
                "created_at": "now()",
            },
            "FROM generate_series(1, %(n)s) g",
            {
                "project": project.pk,
                "problems": problem_ids,
                "n_problems": len(problem_ids),
                "steps": OPEN_STEPS_PER_SOLUTION,
                "n": n_open,
            },
        )
        insert_select(
            cur,
            Step,
            {"solution": "s.id", "index": "k", "text": "p.text || ' (' || s.id || '.' || k || ')'"},
            "FROM annotate_solution s CROSS JOIN generate_series(0, %(last)s) k "
            "JOIN pool p ON p.id = ((s.id * 7919 + k * 104729) %% %(pool)s) "
            "WHERE s.project_id = %(project)s AND s.is_open ORDER BY s.id, k",
            {"last": OPEN_STEPS_PER_SOLUTION - 1, "pool": len(pool), "project": project.pk},
        )
        cur.execute("ANALYZE")
    del rng
    return {"fill_labeled_s": round(t_labeled, 1), "fill_open_s": round(time.perf_counter() - t1, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labeled-steps", type=int, default=100_000)
    parser.add_argument("--open-steps", type=int, default=1_000_000)
    parser.add_argument("--no-write", action="store_true", help="Do not write bench/results.")
    parser.add_argument("--profile", metavar="PATH", help="cProfile the cached retrain into PATH (pstats).")
    args = parser.parse_args()

    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB}"}
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ.setdefault("CELERY_BROKER_URL", "memory://")
    _psql(f"DROP DATABASE IF EXISTS {DB}")
    _psql(f"CREATE DATABASE {DB}")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=os.environ, check=True)
    sys.path.insert(0, str(ROOT))
    import tempfile

    import django

    django.setup()
    from django.conf import settings

    settings.MEDIA_ROOT = Path(tempfile.mkdtemp(prefix="bench-loop-"))

    from annotate.models import Project, Solution, Step
    from ml import services
    from ml.models import StepScore

    fill = _fill(labeled_steps=args.labeled_steps, open_steps=args.open_steps)
    project = Project.objects.get(slug="bench")
    n_open = Step.objects.filter(solution__project=project, solution__is_open=True).count()
    print(f"filled: {fill}; open steps {n_open}", flush=True)

    from ml.services.step_features import featurize_project_steps

    t0 = time.perf_counter()
    featurized = featurize_project_steps(project_id=project.pk)
    t_featurize = time.perf_counter() - t0
    print(f"featurized {featurized} steps once (the import task) in {t_featurize:.1f} s", flush=True)

    def retrain():
        run = services.request_retrain(project=project, enqueue=False)
        t0 = time.perf_counter()
        run = services.run_training(run_id=run.pk, log=lambda line: print("  ", line, flush=True))
        assert run.status == "succeeded", run.error
        return run, time.perf_counter() - t0

    m_cold = retrain()[0].metrics
    # the same labels again: what a periodic retrain pays for labels it has seen (features cached)
    if args.profile:
        import cProfile

        with cProfile.Profile() as prof:
            run, t_run = retrain()
        prof.dump_stats(args.profile)
    else:
        run, t_run = retrain()
    m = run.metrics
    rescore = {}
    for record in (False, True):  # the queue alone, then with the per-step score record
        settings.ML_STORE_STEP_SCORES = record
        t1 = time.perf_counter()
        services.rescore_project(project=project, run=run)
        rescore[record] = time.perf_counter() - t1
    scores = StepScore.objects.filter(training_run=run).count()
    t_rescore = rescore[False]
    top = list(Solution.objects.filter(project=project, is_open=True).order_by("-priority")[:5].values("priority"))

    result = {
        "labeled_steps_requested": args.labeled_steps,
        "examples": m["n_examples"],
        "label_count": run.label_count,
        "open_steps": n_open,
        "step_scores_written": scores,
        **fill,
        "featurize_once_s (import task, all steps)": round(t_featurize, 1),
        "steps_featurized_once": featurized,
        "retrain_total_s": round(t_run, 1),
        "train_s first run (examples + features computed + fit)": m_cold["train_seconds"],
        "train_s (examples + cached features + fit)": m["train_seconds"],
        "score_s (inside the run)": m["score_seconds"],
        "activate_apply_s": round(t_run - m["train_seconds"] - m["score_seconds"], 1),
        "rescore_project_s": round(t_rescore, 1),
        "rescore_project_with_step_score_record_s": round(rescore[True], 1),
        "heldout": {k: m.get(k) for k in ("auroc_negative", "accuracy", "ece", "first_error_f1")},
        "best_epoch": m["best_epoch"],
        "top_priorities": [t["priority"] for t in top],
        "cpus": os.cpu_count(),
        "load_avg_1m_at_end": os.getloadavg()[0],
    }
    print(json.dumps(result, indent=1))
    if args.no_write:
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "loop.json").write_text(json.dumps(result, indent=1))
    ok_train = m["train_seconds"] < TRAIN_TARGET_S
    ok_score = t_rescore < RESCORE_TARGET_S
    met = lambda ok: "(met)" if ok else "(missed)"  # noqa: E731
    lines = [
        "# Model loop in the app (bench/bench_loop.py)",
        "",
        f"PostgreSQL, default PRMConfig, {os.cpu_count()} CPUs (1-minute load average at the end: "
        f"{result['load_avg_1m_at_end']:.1f}). Step features are computed once by the worker task that",
        "follows an import (`ml.tasks.featurize_steps`, into the disk store `ml.prm.feature_store`) and",
        "only read afterwards; a rescoring reads step ids, never step texts.",
        "",
        "| what | number | target (issue 14) |",
        "|---|---|---|",
        f"| featurizing every step once after import ({featurized:,} steps) | {t_featurize:.1f} s | |",
        f"| retrain on {m['n_examples']:,} labeled steps (examples from the DB, cached features, fit) | "
        f"{m['train_seconds']:.1f} s | < {TRAIN_TARGET_S:.0f} s {met(ok_train)} |",
        f"| the first retrain on them (their features computed and stored) | {m_cold['train_seconds']:.1f} s | |",
        f"| rescoring {n_open:,} open steps (cached features, model, queue priorities) | "
        f"{t_rescore:.1f} s | < {RESCORE_TARGET_S:.0f} s {met(ok_score)} |",
        f"| the same with the per-step score record on (`ML_STORE_STEP_SCORES=true`, {scores:,} rows) | "
        f"{rescore[True]:.1f} s | |",
        f"| the whole run (train + score + activate + priorities) | {t_run:.1f} s | |",
        f"| scoring inside the run | {m['score_seconds']:.1f} s | |",
        "",
        f"Held-out (planted data): {json.dumps(result['heldout'])}.",
        "",
    ]
    (RESULTS / "loop.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
