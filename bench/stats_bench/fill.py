"""The benchmark's project, generated in PostgreSQL with INSERT ... SELECT generate_series: solutions of
10 steps, labels by 50 annotators over the last 30 days with consistent counters and label JSON (two
fifths of the labeled solutions labeled twice), 200 gold questions with two QC answers each, and 20
training runs with held-out metrics."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DB = "steplabel_bench_stats"
STEPS_PER_SOLUTION = 10
ANNOTATORS = 50
GOLD = 200


def _label_json(ratings: list[int]) -> str:
    return json.dumps(
        [
            {
                "completions": [{"text": f"step {i}", "rating": r, "flagged": False}],
                "human_completion": None,
                "chosen_completion": None if r == -1 else 0,
            }
            for i, r in enumerate(ratings)
        ]
    )


def _psql(sql: str, db: str = "postgres") -> None:
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-qc", sql], check=True)


def reset_database(env: dict[str, str]) -> None:
    _psql(f"DROP DATABASE IF EXISTS {DB}")
    _psql(f"CREATE DATABASE {DB}")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)


def fill_project(*, solutions: int, labels: int) -> dict[str, float]:
    """Generate the project in SQL; returns seconds per phase."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotate.models import AnnotatorStatus, Membership, Project, Role
    from ml.models import TrainingRun

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    project = Project.objects.create(slug="bench", name="Stats benchmark", overlap=2, screening_threshold=0.8)
    User = get_user_model()
    lead = User.objects.create_user("lead")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    users = User.objects.bulk_create([User(username=f"ann{i:02d}") for i in range(ANNOTATORS)])
    Membership.objects.bulk_create([Membership(project=project, user=u, role=Role.ANNOTATOR) for u in users])
    AnnotatorStatus.objects.bulk_create(
        [
            AnnotatorStatus(project=project, user=u, screening_status="passed" if i % 10 else "failed")
            for i, u in enumerate(users)
        ]
    )
    first_user = min(u.pk for u in users)
    doubles = min(labels * 2 // 5, (solutions - GOLD) * 2) // 2  # solutions labeled twice
    singles = labels - 2 * doubles
    params = {
        "p": project.pk,
        "n": solutions,
        "gold_from": solutions - GOLD + 1,
        "u0": first_user,
        "nu": ANNOTATORS,
        "doubles": doubles,
        "labels": labels,
    }
    with connection.cursor() as cur:
        cur.execute(
            """
            INSERT INTO annotate_problem (id, project_id, text, ground_truth_answer, subject, level, source_id,
                content_hash, text_hash, is_math500, kind, language, created_at)
            SELECT g, %(p)s, 'Problem ' || g || ': compute $1 + ' || g || '$.', (g + 1)::text, 'Algebra',
                'Level ' || (g %% 5 + 1), '', md5('p' || g), md5('t' || g), false, 'math', '', now()
            FROM generate_series(1, %(n)s) g
            """,
            params,
        )
        cur.execute(
            """
            INSERT INTO annotate_solution (id, project_id, problem_id, final_answer, answer_correct, is_pregenerated,
                is_quality_control, is_screening, is_gold, content_hash, n_steps, priority, is_open, annotation_count,
                generation, strategy, verifier_score, extra_labels, created_at)
            SELECT g, %(p)s, g, g::text,
                CASE WHEN g %% 10 < 3 THEN true WHEN g %% 10 = 9 THEN NULL ELSE false END,
                true, g >= %(gold_from)s, false, g >= %(gold_from)s, md5('s' || g), 10,
                (g::bigint * 7919 %% 1000) / 1000.0,
                g > %(doubles)s AND g < %(gold_from)s,
                CASE WHEN g >= %(gold_from)s THEN 3 WHEN g <= %(doubles)s THEN 2
                     WHEN g <= %(doubles)s + %(labels)s - 2 * %(doubles)s THEN 1 ELSE 0 END,
                CASE WHEN g >= %(gold_from)s THEN NULL ELSE g %% 4 END,
                CASE WHEN g >= %(gold_from)s THEN '' ELSE
                    (ARRAY['random', 'uncertainty', 'convincing_wrong', 'mix'])[g %% 4 + 1] END,
                (g::bigint * 104729 %% 1000) / 1000.0, 0, now()
            FROM generate_series(1, %(n)s) g
            """,
            params,
        )
        timings["problems_solutions_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        cur.execute(
            f"""
            INSERT INTO annotate_step (id, solution_id, index, text, step_type)
            SELECT (s - 1) * {STEPS_PER_SOLUTION} + i + 1, s, i,
                'Step ' || i || ' of solution ' || s || ': $x + 1$.', ''
            FROM generate_series(1, %(n)s) s, generate_series(0, {STEPS_PER_SOLUTION - 1}) i
            """,
            params,
        )
        timings["steps_s"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        # Labels a = 1..labels: the first 2*doubles label solutions 1..doubles twice (two annotators),
        # the rest label the next solutions once. Counters match the label JSON built beside them.
        cur.execute(
            """
            WITH base AS (
                SELECT a,
                    CASE WHEN a <= 2 * %(doubles)s THEN (a + 1) / 2 ELSE a - %(doubles)s END AS sol,
                    3 + (a * 31 %% 8) AS n,
                    (a %% 3 = 0) AS neg, (a %% 5 = 0) AS neu, (a %% 20 = 0) AS flag
                FROM generate_series(1, %(labels)s) a
            ), shaped AS (
                SELECT base.*,
                    %(u0)s + (sol + CASE WHEN a <= 2 * %(doubles)s THEN (a %% 2) * 17 ELSE 0 END) %% %(nu)s AS who
                FROM base
            )
            INSERT INTO annotate_annotation (project_id, solution_id, annotator_id, labeler_uuid, source, submitted_at,
                timestamp_text, generation, is_quality_control, is_screening, is_gold, finish_reason, finish_note,
                total_time_ms, label_steps, n_label_steps, n_positive, n_neutral, n_negative, n_unrated, n_flagged,
                n_alternatives, first_error_index, created_at)
            SELECT %(p)s, sol, who, md5('u' || who), 'app',
                now() - make_interval(secs => (a::bigint * 104729) %% (30 * 86400)), '', sol %% 4, false, false, false,
                CASE WHEN neg THEN 'found_error' WHEN a %% 11 = 0 THEN 'give_up' ELSE 'solution' END, '',
                20000 + (a::bigint * 7907) %% 180000,
                (SELECT '[' || string_agg(format(
                    '{"completions":[{"text":"step %%s","rating":%%s,"flagged":%%s}],'
                    '"human_completion":null,"chosen_completion":%%s}',
                    i,
                    CASE WHEN neg AND i = n - 1 THEN -1 WHEN neu AND i = 1 THEN 0 ELSE 1 END,
                    CASE WHEN flag AND i = 0 THEN 'true' ELSE 'false' END,
                    CASE WHEN neg AND i = n - 1 THEN 'null' ELSE '0' END), ',' ORDER BY i) || ']'
                 FROM generate_series(0, n - 1) i),
                n, n - neg::int - neu::int, neu::int, neg::int, 0, flag::int, 0,
                CASE WHEN neg THEN n - 1 END, now()
            FROM shaped
            """,
            params,
        )
        # Gold: one trusted label per gold question, and two QC answers (the second disagrees at step 2).
        cur.execute(
            """
            INSERT INTO annotate_annotation (project_id, solution_id, annotator_id, labeler_uuid, source, submitted_at,
                timestamp_text, generation, is_quality_control, is_screening, is_gold, finish_reason, finish_note,
                total_time_ms, label_steps, n_label_steps, n_positive, n_neutral, n_negative, n_unrated, n_flagged,
                n_alternatives, first_error_index, created_at)
            SELECT %(p)s, g, CASE WHEN k = 0 THEN NULL ELSE %(u0)s + (g * 3 + k) %% %(nu)s END,
                CASE WHEN k = 0 THEN 'gold' ELSE md5('u' || (%(u0)s + (g * 3 + k) %% %(nu)s)) END,
                CASE WHEN k = 0 THEN 'import' ELSE 'app' END,
                now() - make_interval(secs => (g * 7 + k * 3600) %% (20 * 86400)), '', NULL, true, false, k = 0,
                'found_error', '', CASE WHEN k = 0 THEN NULL ELSE 60000 END,
                CASE WHEN k = 2 THEN %(answer_wrong)s ELSE %(answer_right)s END,
                CASE WHEN k = 2 THEN 2 ELSE 3 END, CASE WHEN k = 2 THEN 1 ELSE 2 END, 0, 1, 0, 0, 0,
                CASE WHEN k = 2 THEN 1 ELSE 2 END, now()
            FROM generate_series(%(gold_from)s, %(n)s) g, generate_series(0, 2) k
            """,
            {**params, "answer_right": _label_json([1, 1, -1]), "answer_wrong": _label_json([1, -1])},
        )
        timings["annotations_s"] = time.perf_counter() - t2
    for i in range(20):
        heldout = {
            "auroc_negative": 0.55 + i * 0.015,
            "accuracy": 0.5 + i * 0.01,
            "first_error_f1": 0.2 + i * 0.012,
            "ece": 0.2 - i * 0.008,
        }
        TrainingRun.objects.create(
            project=project,
            status="succeeded",
            label_count=(i + 1) * 5000,
            is_active=i == 19,
            metrics={"train": heldout, "heldout": heldout},
        )
    t3 = time.perf_counter()
    with connection.cursor() as cur:
        for table in ("annotate_problem", "annotate_solution", "annotate_step", "annotate_annotation"):
            cur.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
    connection.close()
    _psql("VACUUM ANALYZE", DB)
    timings["vacuum_analyze_s"] = time.perf_counter() - t3
    return {k: round(v, 2) for k, v in timings.items()} | {"doubles": doubles, "singles": singles}
