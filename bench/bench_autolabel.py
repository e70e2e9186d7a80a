"""Automatic labels: completions the binary search saves on real solution lengths, and job throughput.

    .venv/bin/python bench/bench_autolabel.py [--rollouts 8] [--solutions 300] [--delay 0.0]

1. Savings (no server, no database): for every ProcessBench solution (real step counts and expert
   first-error labels, ../shared/data/processbench), count the completions Math-Shepherd's
   per-step rollouts need (steps x N), what `--search full` needs (the graded last step is free),
   and what the binary search needs, with a rollout oracle whose estimate is positive exactly
   before the expert's first error. Also: how often the binary search's first `-` is the expert's.
2. Throughput: a real autolabel job (autolabel.services.run_job, PostgreSQL) over `--solutions`
   ProcessBench solutions against the stand-in completions server (tests/autolabel, in its own
   process), which answers after `--delay` seconds, right before the expert's first error and
   wrong from it on. With no delay this is the ceiling of our side (HTTP, grading, storing); a
   real server's generation time adds to it. Needs DATABASE_URL (a database
   `<name>_autolabel_bench` is created beside it).

Writes bench/results/autolabel.md and .json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"

from autolabel.agreement import compare  # noqa: E402  (pure: no Django)
from autolabel.rollouts import search  # noqa: E402
from ml.prm.data import DATA as SHARED_DATA  # noqa: E402

DATA = SHARED_DATA / "processbench"


def load(split: str) -> list[dict]:
    return json.loads((DATA / f"{split}.json").read_text())


def probes_for(
    n: int, first_error: int | None, answer_correct: bool, mode: str, *, rollouts: int = 8, noise=None
) -> tuple[int, int | None]:
    """Rollout requests one solution needs, and the first `-` found. The oracle is perfect (estimate
    positive exactly before the expert's first error) unless `noise` = (rng, r, q): a completion
    then reaches the answer with probability r from a correct prefix and q from a wrong one."""
    measured = {n - 1: 1.0 if answer_correct else 0.0}
    requests = 0
    while True:
        index, first_zero = search(n_steps=n, measured=measured, answer_correct=answer_correct, mode=mode)
        if index is None:
            return requests, first_zero
        requests += 1
        wrong = first_error is not None and index >= first_error
        if noise is None:
            measured[index] = 0.0 if wrong else 1.0
        else:
            rng, r, q = noise
            measured[index] = sum(rng.random() < (q if wrong else r) for _ in range(rollouts)) / rollouts


def agreement(split_items: list[dict], *, rollouts: int, noise=None) -> dict:
    """Binary-search labels against the experts' first errors (autolabel.agreement, as the dashboard)."""
    totals = {"tp": 0, "fp": 0, "fn": 0, "first_error_agree": 0}
    for item in split_items:
        n = len(item["steps"])
        first_error = None if item["label"] < 0 else item["label"]
        _, found = probes_for(n, first_error, item["final_answer_correct"], "binary", rollouts=rollouts, noise=noise)
        auto = [1] * n if found is None else [1] * found + [-1] * (n - found)
        human = [1] * n if first_error is None else [1] * first_error + [-1] + [None] * (n - first_error - 1)
        for key, value in compare(auto, human).items():
            totals[key] += value
    tp, fp, fn = totals["tp"], totals["fp"], totals["fn"]
    return {
        "precision_negative": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall_negative": round(tp / (tp + fn), 4) if tp + fn else None,
        "first_error_agreement": round(totals["first_error_agree"] / len(split_items), 4),
    }


NOISE_R, NOISE_Q = 0.5, 0.05  # simulated: completion success from a correct / a wrong prefix


def savings(rollouts: int) -> list[dict]:
    rows = []
    for split in ("gsm8k", "math", "olympiadbench"):
        items = load(split)
        steps = naive = full = binary = agree = full_wrong = binary_wrong = 0
        for item in items:
            n = len(item["steps"])
            first_error = None if item["label"] < 0 else item["label"]
            steps += n
            naive += n * rollouts
            cost_full = probes_for(n, first_error, item["final_answer_correct"], "full")[0] * rollouts
            requests, found = probes_for(n, first_error, item["final_answer_correct"], "binary")
            full += cost_full
            binary += requests * rollouts
            if not item["final_answer_correct"]:  # where a search happens at all
                full_wrong += cost_full
                binary_wrong += requests * rollouts
            agree += found == first_error
        rows.append(
            {
                "split": split,
                "solutions": len(items),
                "steps": steps,
                "mean_steps": round(steps / len(items), 2),
                "naive_completions": naive,
                "full_completions": full,
                "binary_completions": binary,
                "saved_vs_naive": round(1 - binary / naive, 4),
                "saved_vs_full": round(1 - binary / full, 4) if full else None,
                "wrong_answer_full_completions": full_wrong,
                "wrong_answer_binary_completions": binary_wrong,
                "saved_on_wrong_answers": round(1 - binary_wrong / full_wrong, 4) if full_wrong else None,
                "first_error_as_expert": round(agree / len(items), 4),
                "agreement_perfect_rollouts": agreement(items, rollouts=rollouts),
                "agreement_noisy_rollouts": agreement(
                    items, rollouts=rollouts, noise=(random.Random(0), NOISE_R, NOISE_Q)
                ),
            }
        )
    return rows


def throughput(*, rollouts: int, solutions: int, delay: float, concurrency: int) -> dict:
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/steplabel")
    name = base.rsplit("/", 1)[1] + "_autolabel_bench"
    os.environ["DATABASE_URL"] = base.rsplit("/", 1)[0] + "/" + name
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import psycopg

    with psycopg.connect(base.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    import django

    django.setup()
    from django.core.management import call_command

    from annotate.models import Project
    from autolabel import services
    from autolabel.models import AutoStepLabel
    from tests.autolabel.stand_in_server import Behaviour, stand_in_server

    call_command("migrate", verbosity=0)
    items = load("math")[:solutions]
    source = RESULTS / "autolabel_bench_input.jsonl"
    errors: dict[str, str] = {}
    with open(source, "w") as out:
        for i, item in enumerate(items):
            problem = f"[{i}] {item['problem']}"
            if item["label"] >= 0:
                errors[problem] = item["steps"][item["label"]]
            answer = "42" if item["final_answer_correct"] else "41"
            out.write(
                json.dumps({"problem": problem, "ground_truth_answer": "42", "steps": item["steps"], "answer": answer})
            )
            out.write("\n")
    call_command("import_prm800k", str(source), project="bench", no_progress=True)
    source.unlink()

    class Oracle(Behaviour):
        def complete(self, prompt: str, n: int) -> list[str]:
            problem = prompt.split("\n\n", 1)[0]
            wrong = problem in errors and errors[problem].rstrip() in prompt
            return [f"Continuing.\n# Answer\n\n{41 if wrong else 42}"] * n

    def serve(pipe) -> None:  # in its own process, as a real server would be
        with stand_in_server(Oracle(answers={}, delay_s=delay)) as url:
            pipe.send(url)
            pipe.recv()  # until the bench is done

    from django.db import connections

    connections.close_all()
    parent, child = multiprocessing.get_context("fork").Pipe()
    server = multiprocessing.get_context("fork").Process(target=serve, args=(child,), daemon=True)
    server.start()
    url = parent.recv()
    project = Project.objects.get(slug="bench")
    try:
        job = services.create_job(
            project=project,
            user=None,
            options={"base_url": url, "model": "stand-in", "rollouts": rollouts, "concurrency": concurrency},
        )
        started = time.perf_counter()
        job = services.run_job(job_id=job.pk)
        seconds = time.perf_counter() - started
    finally:
        parent.send("stop")
        server.join(timeout=10)
    assert job is not None and job.status == "succeeded", job and job.error
    return {
        "solutions": solutions,
        "steps": sum(len(item["steps"]) for item in items),
        "rollouts": rollouts,
        "concurrency": concurrency,
        "server_delay_s": delay,
        "requests": job.requests_done,
        "completions": job.completions_used,
        "labels": AutoStepLabel.objects.count(),
        "seconds": round(seconds, 2),
        "completions_per_s": round(job.completions_used / seconds, 1),
        "requests_per_s": round(job.requests_done / seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rollouts", type=int, default=8)
    parser.add_argument("--solutions", type=int, default=300)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args()
    result = {"rollouts": args.rollouts, "savings": savings(args.rollouts)}
    if not args.skip_throughput:
        result["throughput"] = throughput(
            rollouts=args.rollouts, solutions=args.solutions, delay=args.delay, concurrency=args.concurrency
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "autolabel.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# Automatic labels: binary-search savings and job throughput",
        "",
        f"`bench/bench_autolabel.py`, N = {args.rollouts} completions per probed prefix.",
        "",
        "## Completions per labeled solution set (ProcessBench step counts, oracle rollouts)",
        "",
        "| split | solutions | steps (mean) | steps x N | full (last step graded) | binary search | saved vs steps x N "
        "| wrong answers only: full -> binary | binary first `-` = expert's |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["savings"]:
        lines.append(
            f"| {row['split']} | {row['solutions']} | {row['steps']} ({row['mean_steps']}) "
            f"| {row['naive_completions']:,} | {row['full_completions']:,} | {row['binary_completions']:,} "
            f"| {row['saved_vs_naive']:.1%} "
            f"| {row['wrong_answer_full_completions']:,} -> {row['wrong_answer_binary_completions']:,} "
            f"(-{row['saved_on_wrong_answers']:.1%}) | {row['first_error_as_expert']:.1%} |"
        )
    lines += [
        "",
        "## Agreement with ProcessBench's experts (first errors), binary-search labels",
        "",
        "Rollouts simulated: *perfect* (a completion reaches the answer exactly from prefixes before the expert's "
        f"first error) and *noisy* (it does with probability {NOISE_R} from a correct prefix and {NOISE_Q} from a "
        "wrong one). Same measures as the dashboard (autolabel.agreement). No model was run: an upper bound and "
        "one plausible noise level, not a measurement of a labeling model.",
        "",
        "| split | perfect: precision / recall of `-` | perfect: first-error agreement "
        "| noisy: precision / recall of `-` | noisy: first-error agreement |",
        "|---|---|---|---|---|",
    ]
    for row in result["savings"]:
        perfect, noisy = row["agreement_perfect_rollouts"], row["agreement_noisy_rollouts"]
        lines.append(
            f"| {row['split']} | {perfect['precision_negative']:.1%} / {perfect['recall_negative']:.1%} "
            f"| {perfect['first_error_agreement']:.1%} | {noisy['precision_negative']:.1%} / "
            f"{noisy['recall_negative']:.1%} | {noisy['first_error_agreement']:.1%} |"
        )
    if "throughput" in result:
        t = result["throughput"]
        lines += [
            "",
            "## Job throughput against the local stand-in server",
            "",
            f"{t['solutions']} ProcessBench math solutions ({t['steps']} steps), concurrency {t['concurrency']}, "
            f"server delay {t['server_delay_s']} s: {t['requests']} requests, {t['completions']} completions, "
            f"{t['labels']} step labels in {t['seconds']} s = **{t['completions_per_s']} completions/s** "
            f"({t['requests_per_s']} requests/s), PostgreSQL, grading and HTTP included.",
        ]
    lines += [
        "",
        "Full and binary both take the graded final answer as the last step's estimate (free). The binary "
        "search spends nothing on graded-correct solutions (the solution itself reaches the answer from every "
        "prefix, so every step is `+`); where ProcessBench's experts still found an error in such a solution, "
        "Monte Carlo labels miss it whatever the search: that is the last column's gap.",
    ]
    (RESULTS / "autolabel.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
