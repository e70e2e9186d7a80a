"""Import and export of generated PRM800K-shape records on PostgreSQL: time and peak memory.

    .venv/bin/python bench/bench_import_export.py [--records 100000] [--small 20000]

Generates phase-2 records shaped like phase2_train (about 10 steps, ~4.8 KB a line), imports them
with `manage.py import_prm800k` into a fresh database, exports them with `export_prm800k`, checks
the export equals the input, and repeats at a smaller size to show memory does not grow with the
file. Each command runs as its own process, measured with its peak RSS (ru_maxrss of the child).
Writes bench/results/import_export.md and .json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
WORDS = (
    "we the of a to and is so that this can find let equation number value sum then which since both "
    "square root factor multiply divide side term prime integer solve substitute simplify get have"
).split()


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return f"{text.capitalize()} ${rng.randint(2, 99)}x + {rng.randint(1, 9)} = {rng.randint(10, 999)}$."


def generate(path: Path, records: int, seed: int = 0) -> int:
    """Write `records` PRM800K phase-2 lines; return the file size in bytes."""
    rng = random.Random(seed)
    problems = []
    for i in range(max(1, records // 8)):
        answer = str(rng.randint(1, 500)) if i % 4 else f"\\frac{{{rng.randint(1, 9)}}}{{{rng.randint(11, 19)}}}"
        problems.append((f"Problem {i}: " + _sentence(rng, 40), " ".join(_sentence(rng, 18) for _ in range(6)), answer))
    with open(path, "w") as out:
        for n in range(records):
            problem, gt_solution, gt_answer = problems[n % len(problems)]
            n_steps = rng.randint(7, 13)
            steps = [_sentence(rng, 22) for _ in range(n_steps - 1)]
            wrong = rng.random() < 0.7
            answer = str(rng.randint(1, 500)) if wrong else gt_answer
            steps.append(f"So the answer is {answer}.\n\n# Answer\n\n{answer}")
            first_error = rng.randint(1, n_steps - 1) if wrong else None
            label_steps = []
            for i, text in enumerate(steps):
                if first_error is not None and i == first_error:
                    completions = [{"text": text, "rating": -1, "flagged": None}]
                    completions += [{"text": _sentence(rng, 20), "rating": rng.choice([-1, 0, 1]), "flagged": None}]
                    label_steps.append(
                        {"completions": completions, "human_completion": None, "chosen_completion": None}
                    )
                    break
                rating = 1 if rng.random() < 0.85 else 0
                label_steps.append(
                    {
                        "completions": [{"text": text, "rating": rating, "flagged": None}],
                        "human_completion": None,
                        "chosen_completion": 0,
                    }
                )
            record = {
                "labeler": str(_uuid(rng)),
                "timestamp": f"2022-11-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:{(n * 7) % 60:02d}.{n % 999999:06d}",
                "generation": 1 + n % 10,
                "is_quality_control_question": False,
                "is_initial_screening_question": False,
                "question": {
                    "problem": problem,
                    "ground_truth_solution": gt_solution,
                    "ground_truth_answer": gt_answer,
                    "pre_generated_steps": steps,
                    "pre_generated_answer": answer,
                    "pre_generated_verifier_score": rng.random() ** 4,
                },
                "label": {
                    "steps": label_steps,
                    "total_time": rng.randint(10_000, 600_000),
                    "finish_reason": "found_error" if first_error is not None else "solution",
                },
            }
            out.write(json.dumps(record) + "\n")
    return path.stat().st_size


def _uuid(rng: random.Random) -> str:
    import uuid

    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def run_command(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run a manage.py command as a child; return (seconds, peak RSS MiB of that child, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the max over all children so far: run the small size first.
    return seconds, max(peak, before) / 1024, proc.stdout


def _reset_database(env: dict[str, str], name: str) -> None:
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {name}"], check=True)
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"CREATE DATABASE {name}"], check=True)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)


def _sha(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bench_size(records: int, workdir: Path) -> dict[str, float]:
    db = "steplabel_bench_io"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{db}",
        "DEBUG": "false",
    }
    source = workdir / f"records_{records}.jsonl"
    size = generate(source, records)
    _reset_database(env, db)
    import_s, import_rss, _ = run_command(["import_prm800k", str(source), "--project", "bench", "--no-progress"], env)
    exported = workdir / f"export_{records}.jsonl"
    export_s, export_rss, _ = run_command(["export_prm800k", "--project", "bench", "--out", str(exported)], env)
    identical = _sha(source) == _sha(exported)
    steps = sum(1 for _ in open(source))  # lines; steps counted below from the database
    del steps
    count = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-tAc", "SELECT count(*) FROM annotate_step"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return {
        "records": records,
        "file_mb": round(size / 1e6, 1),
        "steps": int(count),
        "import_s": round(import_s, 1),
        "import_peak_rss_mb": round(import_rss),
        "import_mb_per_s": round(size / 1e6 / import_s, 1),
        "export_s": round(export_s, 1),
        "export_peak_rss_mb": round(export_rss),
        "export_mb_per_s": round(size / 1e6 / export_s, 1),
        "export_identical": identical,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=20_000)
    parser.add_argument("--workdir", type=Path, default=ROOT / "var" / "bench")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = [bench_size(args.small, args.workdir), bench_size(args.records, args.workdir)]
    small, large = rows
    ratio = {
        "records": round(large["records"] / small["records"], 1),
        "import_rss_growth": round(large["import_peak_rss_mb"] / small["import_peak_rss_mb"], 2),
        "export_rss_growth": round(large["export_peak_rss_mb"] / small["export_peak_rss_mb"], 2),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "import_export.json").write_text(json.dumps({"rows": rows, "ratio": ratio}, indent=2) + "\n")
    header = list(rows[0])
    lines = [
        "# Import and export of PRM800K-shape records (PostgreSQL, 2 cores)",
        "",
        "Targets: 100,000 records (~1M steps) each way in under 60 s, memory flat in the file size.",
        "Peak RSS is a high-water mark over the bench's child processes, measured smallest size first.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    lines += ["| " + " | ".join(str(row[key]) for key in header) + " |" for row in rows]
    lines += [
        "",
        f"Records x{ratio['records']}: import peak RSS x{ratio['import_rss_growth']}, "
        f"export peak RSS x{ratio['export_rss_growth']}.",
        "",
    ]
    (RESULTS / "import_export.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
