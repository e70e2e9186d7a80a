"""Loading a queue of `size` open solutions of 10 steps, generated inside PostgreSQL with
INSERT ... SELECT generate_series."""

from __future__ import annotations

import os
import time

STEPS_PER_SOLUTION = 10
SOLUTIONS_PER_PROBLEM = 10


def insert_select(cur, model, exprs: dict[str, str], from_sql: str, params: dict) -> None:
    """INSERT INTO model's table SELECT ...: every concrete column, from `exprs` (SQL by field name)
    or else the field's Python default, so columns added to the models later need no edit here."""
    from django.db import connection

    columns, values = [], []
    for f in model._meta.concrete_fields:
        if f.primary_key:
            continue
        columns.append(connection.ops.quote_name(f.column))
        if f.name in exprs:
            values.append(exprs[f.name])
            continue
        default = f.get_default()
        if default is None and not f.null:
            raise RuntimeError(f"bench: no value for {model.__name__}.{f.name}")
        key = f"default_{f.column}"
        params[key] = f.get_db_prep_save(default, connection)
        values.append(f"%({key})s")
    cur.execute(
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) SELECT {', '.join(values)} {from_sql}", params
    )


def load_queue(*, size: int, users: list[tuple[int, str]], slug: str = "") -> tuple[str, float]:
    """A project (`slug`, default bench-<size>) with `size` open solutions of 10 steps, generated
    inside PostgreSQL."""
    from django.db import connection

    from annotate.models import Membership, Problem, Project, Role, Solution, Step

    slug = slug or f"bench-{size}"
    # retrain_every=0: the queue alone is measured, not the ML app's post-submit retrain check.
    project = Project.objects.create(slug=slug, overlap=1, qc_rate=0.0, lease_minutes=30, retrain_every=0)
    Membership.objects.bulk_create([Membership(project=project, user_id=pk, role=Role.ANNOTATOR) for pk, _ in users])
    n_problems = -(-size // SOLUTIONS_PER_PROBLEM)
    started = time.perf_counter()
    with connection.cursor() as cur:
        insert_select(
            cur,
            Problem,
            {
                "project": "%(project)s",
                "text": "'Problem ' || g || ': what is $' || g || ' + 1$?'",
                "ground_truth_answer": "(g + 1)::text",
                "subject": "'Algebra'",
                "level": "'Level 3'",
                "source_id": "'bench/' || g",
                "content_hash": "md5('problem' || g)",
                "text_hash": "md5('text' || g)",
                "created_at": "now()",
            },
            "FROM generate_series(1, %(n)s) g",
            {"project": project.pk, "n": n_problems},
        )
        cur.execute("SELECT min(id) FROM annotate_problem WHERE project_id = %s", [project.pk])
        first_problem = cur.fetchone()[0]
        insert_select(
            cur,
            Solution,
            {
                "project": "%(project)s",
                "problem": "%(first_problem)s + (g - 1) / %(per_problem)s",
                "final_answer": "(g %% 7)::text",
                "answer_correct": "g %% 3 = 0",
                "content_hash": "md5('solution' || g)",
                "n_steps": "%(steps)s",
                "priority": "random()",
                "generation": "1",
                "strategy": "'uncertainty'",
                "verifier_score": "random()",
                "created_at": "now()",
            },
            "FROM generate_series(1, %(n)s) g",
            {
                "project": project.pk,
                "first_problem": first_problem,
                "per_problem": SOLUTIONS_PER_PROBLEM,
                "steps": STEPS_PER_SOLUTION,
                "n": size,
            },
        )
        insert_select(
            cur,
            Step,
            {
                "solution": "s.id",
                "index": "k",
                "text": "'Step ' || k || ' of solution ' || s.id || ': expand, simplify and check the sum.'",
            },
            "FROM annotate_solution s, LATERAL generate_series(0, %(steps)s - 1) k WHERE s.project_id = %(project)s",
            {"project": project.pk, "steps": STEPS_PER_SOLUTION},
        )
    connection.close()
    load_seconds = time.perf_counter() - started
    import psycopg

    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE annotate_problem, annotate_solution, annotate_step, annotate_assignment")
    return slug, load_seconds
