"""Claims right after a bulk import: with and without the import's closing ANALYZE.

For each size, in a fresh PostgreSQL database whose app tables have autovacuum off (the state of
any database in the minute before autovacuum gets round to a big load, and always where it is off):
  1. imports a generated plain JSONL file (3 steps per solution) through the real import
     (annotate.services.imports.import_file) with its closing ANALYZE skipped, as before;
  2. measures claims: in-process claim_next() calls one at a time (each one submitted, so the next
     walks past it) and EXPLAIN ANALYZE of the claim's candidate query (bench_queue's);
  3. runs the ANALYZE the import now ends with (core.bulk_insert.analyze) and measures again.

    .venv/bin/python bench/bench_claim_after_import.py                    # 10k and 100k
    .venv/bin/python bench/bench_claim_after_import.py --sizes 1000000    # 1M: a long import

It drops and recreates its own database (default steplabel_bench_analyze). Results go to
bench/results/claim_after_import.md and .json.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_queue import drop_database, explain_claim, recreate_database, setup_django  # noqa: E402
from queue_bench.claims import timed_claims  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
TABLES = ("annotate_problem", "annotate_solution", "annotate_step", "annotate_annotation", "annotate_assignment")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated numbers of solutions")
    parser.add_argument("--claims", type=int, default=40, help="claims measured per size and state")
    parser.add_argument("--db", default="steplabel_bench_analyze")
    return parser.parse_args()


def write_file(path: Path, size: int) -> None:
    with path.open("w") as out:
        for i in range(size):
            problem = i // 4  # 4 solutions per problem
            line = {
                "problem": f"Problem {problem}: what is ${problem} + 1$?",
                "ground_truth_answer": str(problem + 1),
                "steps": [f"Solution {i}: start from {problem}.", f"Add one: {problem + 1 + i % 3}.",
                          f"# Answer\n\n{problem + 1 + i % 3}"],
                "source_id": f"bench/{i}",
            }  # fmt: skip
            out.write(json.dumps(line) + "\n")


def measure(*, slug: str, project, users, count: int, offset: int) -> dict:
    from django.db import connection

    result = {"claim_ms": timed_claims(project=project, users=users, count=count, key_prefix=f"c-{offset}")}
    result["explain"] = explain_claim(slug=slug, user_pk=users[0].pk)
    connection.close()
    return result


def run_size(args: argparse.Namespace, size: int) -> dict:
    import psycopg

    recreate_database(args.db)
    with psycopg.connect(f"postgres://postgres@127.0.0.1:5432/{args.db}", autocommit=True) as conn:
        for table in TABLES:
            conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")

    from django.contrib.auth import get_user_model

    from annotate.models import Annotation, Membership, Problem, Project, Role, Solution, Step
    from annotate.services import imports
    from annotate.services.imports import writing
    from core.bulk_insert import analyze

    project = Project.objects.create(slug=f"analyze-{size}", name="bench", retrain_every=0)
    users = [get_user_model().objects.create_user(f"bench{size}-{i}") for i in range(4)]
    Membership.objects.bulk_create([Membership(project=project, user=u, role=Role.ANNOTATOR) for u in users])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "import.jsonl"
        write_file(path, size)
        writing.analyze = lambda *models: None  # step 1: the import as it was, no closing ANALYZE
        started = time.perf_counter()
        result = imports.import_file(project=project, path=path)
        import_s = time.perf_counter() - started
        writing.analyze = analyze
    before = measure(slug=project.slug, project=project, users=users, count=args.claims, offset=0)
    started = time.perf_counter()
    analyze(Problem, Solution, Step, Annotation)
    analyze_s = time.perf_counter() - started
    after = measure(slug=project.slug, project=project, users=users, count=args.claims, offset=1)
    return {
        "solutions": result.solutions_created,
        "steps": result.steps_created,
        "import_s": round(import_s, 1),
        "analyze_s": round(analyze_s, 2),
        "before": before,
        "after": after,
    }


def write_report(report: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "claim_after_import.json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [
        "# Claims right after a bulk import (PostgreSQL, autovacuum off on the app's tables)",
        "",
        f"{report['machine']}. In-process claim_next() one at a time, {report['claims']} claims per state "
        "(each submitted); EXPLAIN ANALYZE of the claim's candidate query (median of 5). `before`: the import "
        "without its closing ANALYZE (the code before); `after`: with it.",
        "",
        "| solutions | import | ANALYZE | claim p50 before | p95 before | p50 after | p95 after | "
        "EXPLAIN before | EXPLAIN after | indexes before | indexes after |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in report["sizes"]:
        b, a = row["before"], row["after"]
        lines.append(
            f"| {row['solutions']:,} | {row['import_s']} s | {row['analyze_s']} s | {b['claim_ms']['p50']} ms | "
            f"{b['claim_ms']['p95']} ms | {a['claim_ms']['p50']} ms | {a['claim_ms']['p95']} ms | "
            f"{b['explain']['execution_ms']} ms | {a['explain']['execution_ms']} ms | "
            f"{', '.join(b['explain']['indexes']) or 'none (seq scan)'} | {', '.join(a['explain']['indexes'])} |"
        )
    if report.get("note"):
        lines += ["", report["note"]]
    (RESULTS / "claim_after_import.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    args = parse_args()
    setup_django(args.db)
    sizes = [int(s) for s in args.sizes.split(",")]
    report = {
        "machine": f"{platform.machine()}, {platform.python_version()}, shared 2-core machine",
        "claims": args.claims,
        "sizes": [],
    }
    try:
        for size in sizes:
            print(f"== {size:,} solutions", flush=True)
            report["sizes"].append(run_size(args, size))
            print(json.dumps(report["sizes"][-1]), flush=True)
    finally:
        drop_database(args.db)
    write_report(report)


if __name__ == "__main__":
    main()
