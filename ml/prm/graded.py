"""Graded solutions by problem from the shared real data, and real preference pairs built from them.

- ProcessBench (a JSON array): `final_answer_correct`, checked by the benchmark's experts.
- MR-Ben (a JSON object): `Model_Solution_Correctness`, judged by people.
- prm800k-stepwise phase 1 (Parquet): PRM800K's labelers rated several alternative completions per
  step, and a completion that states a final answer carries it in `answer`. Each such completion,
  after the accepted steps before it, is one complete solution. Graded against MATH-500's reference
  answer (`prm800k/math500_test.jsonl`, PRM800K's grader) where the problem is there (the phase-1
  test problems), else by the labeler's rating of that answer step (+1 right, -1 wrong; 0 and
  unrated are left out). On the test problems the two agree on 253 of 295 rated answer steps (86%).

A pair is two solutions of one problem, one graded right and one wrong; the right one is preferred.
PRM800K pairs are limited to alternatives at the *same* step after the same accepted steps: across
steps, the right answer sits at the end of the accepted path by construction (labelers went on
until a right answer), so length alone would give them away.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ml.prm.reward import PairExample
from prm800k.grading import grade_answer


@dataclass(frozen=True, slots=True)
class Graded:
    steps: tuple[str, ...]
    answer: str | None
    correct: bool
    source: str
    prefix: tuple[str, ...] | None = None  # PRM800K: the accepted steps before the answer step


def processbench(path: Path) -> dict[str, list[Graded]]:
    groups: dict[str, list[Graded]] = defaultdict(list)
    for record in json.loads(path.read_text(encoding="utf-8")):
        groups[record["problem"]].append(
            Graded(tuple(record["steps"]), None, bool(record["final_answer_correct"]), f"processbench-{path.stem}")
        )
    return dict(groups)


def mrben(path: Path) -> dict[str, list[Graded]]:
    groups: dict[str, list[Graded]] = defaultdict(list)
    for solutions in json.loads(path.read_text(encoding="utf-8")).values():
        for s in solutions:
            steps = tuple(s["Model_Solution_Steps"])
            match = re.search(r"Choice_?\s*([A-D])", steps[-1]) if steps else None
            problem = s["Question"] + ("\n" + s["Options"] if s.get("Options") else "")
            groups[problem].append(
                Graded(steps, match.group(1) if match else None, s["Model_Solution_Correctness"] == "correct", "mr-ben")
            )
    return dict(groups)


def stepwise(paths: list[Path], reference: Path | None) -> dict[str, list[Graded]]:
    """Complete solutions of prm800k-stepwise Parquet files (see the module docstring)."""
    import pyarrow.parquet as pq

    truth = {}
    if reference is not None and reference.is_file():
        for line in reference.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                truth[row["problem"]] = row["answer"]
    groups: dict[str, dict[tuple[str, ...], Graded]] = defaultdict(dict)
    columns = ["instruction", "responses", "next_response", "answer", "is_human_response", "rating"]
    for path in paths:
        for r in pq.read_table(path, columns=columns).to_pylist():
            if r["answer"] is None or r["is_human_response"]:
                continue
            problem, answer = r["instruction"], r["answer"]
            if problem in truth:
                correct = grade_answer(truth[problem], answer)
            else:
                correct = {1: True, -1: False}.get(None if r["rating"] is None else int(r["rating"]))
            if correct is None:
                continue
            prefix = tuple(r["responses"])
            steps = (*prefix, f"{r['next_response']}\n\n# Answer\n\n{answer}")
            groups[problem][steps] = Graded(steps, answer, bool(correct), "prm800k-phase1", prefix)
    return {problem: list(found.values()) for problem, found in groups.items()}


def shared_groups(data: Path) -> dict[str, dict[str, list[Graded]]]:
    """Every source in the shared data folder that is there: {source: {problem: [Graded]}}."""
    out: dict[str, dict[str, list[Graded]]] = {}
    pb = data / "processbench"
    if pb.is_dir():
        merged: dict[str, list[Graded]] = defaultdict(list)
        for split in ("gsm8k", "math", "olympiadbench"):
            if (pb / f"{split}.json").is_file():
                for problem, graded in processbench(pb / f"{split}.json").items():
                    merged[problem] += graded
        out["processbench"] = dict(merged)
    if (data / "mr-ben" / "math.json").is_file():
        out["mr-ben"] = mrben(data / "mr-ben" / "math.json")
    parquet = (
        sorted((data / "prm800k-stepwise").glob("phase1_*.parquet")) if (data / "prm800k-stepwise").is_dir() else []
    )
    if parquet:
        out["prm800k-phase1"] = stepwise(parquet, data / "prm800k" / "math500_test.jsonl")
    return out


def right_wrong_pairs(groups: dict[str, list[Graded]], *, seed: int = 0) -> list[PairExample]:
    """Every (right, wrong) pair of one problem, sides drawn at random; PRM800K alternatives only
    at the same step with different answers."""
    rng = random.Random(seed)
    pairs = []
    for problem in sorted(groups):
        graded = groups[problem]
        right = [g for g in graded if g.correct]
        wrong = [g for g in graded if not g.correct]
        for good, bad in itertools.product(right, wrong):
            if good.prefix is not None and (good.prefix != bad.prefix or good.answer == bad.answer):
                continue
            if rng.random() < 0.5:
                pairs.append(PairExample(problem, good.steps, bad.steps, "A"))
            else:
                pairs.append(PairExample(problem, bad.steps, good.steps, "B"))
    return pairs
