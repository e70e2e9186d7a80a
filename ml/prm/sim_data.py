"""Data for the offline simulation (ml.prm.active_sim): solutions that can be offered for labeling,
loaded from PRM800K JSONL, a ProcessBench JSON array, MR-Ben JSON or the prm800k-stepwise Parquet.

The oracle answers from the file's own labels and stops at the first -1, as PRM800K phase 2 did.
Final answers are graded with prm800k.grading, as the app grades an import.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ml.prm.examples import StepExample, examples_from_record, examples_from_steps, path_first_error
from prm800k.grading import grade_answer


@dataclass
class SimItem:
    """One solution that can be offered for labeling."""

    solution_id: str
    problem_id: str
    problem: str
    steps: list[str]  # what the model scores
    answer_correct: bool | None  # graded final answer; None when it cannot be graded
    first_error: int  # truth for first-error F1: index of the first -1 step, or -1
    labeled: list[StepExample] = field(default_factory=list)  # what the oracle reveals when labeled
    keys: list[str] = field(default_factory=list)  # feature-cache keys of `steps`

    @property
    def n_labels(self) -> int:
        return len(self.labeled)


def items_from_prm800k_records(records: Sequence[dict], *, source: str = "prm800k") -> list[SimItem]:
    items = []
    for n, rec in enumerate(records):
        sid = f"{source}:{n}"
        q = rec.get("question") or {}
        # Graded as the app grades an import (prm800k.grading): None when it cannot be decided.
        correct = grade_answer(q.get("ground_truth_answer"), q.get("pre_generated_answer"))
        exs = examples_from_record(rec, solution_id=sid, answer_correct=correct)
        if not exs:
            continue
        paths = path_first_error(exs)
        path, fe = paths.get(sid, ([], -1))
        fe = path[fe].step_index if fe >= 0 else -1  # unrated steps (trace observations) may come before it
        steps = list(q.get("pre_generated_steps") or [e.step for e in path])
        if not steps:
            continue
        if fe >= len(steps):
            continue
        # the oracle stops at the main line's first -1 (alternatives at that step are still rated)
        labeled = [e for e in exs if fe < 0 or e.step_index <= fe]
        items.append(SimItem(sid, exs[0].problem_id, exs[0].problem, steps, correct, fe, labeled))
    return items


def items_from_first_error(rows: Sequence[dict], *, source: str) -> list[SimItem]:
    """rows: {id, problem, steps, label (first error or -1), final_answer_correct}."""
    items = []
    for n, r in enumerate(rows):
        sid = str(r.get("id") or f"{source}:{n}")
        pid = str(r.get("problem_id") or r["problem"])
        fac = r.get("final_answer_correct")
        correct = None if fac is None else bool(fac)
        exs = examples_from_steps(
            r["problem"], r["steps"], int(r["label"]), solution_id=sid, problem_id=pid, answer_correct=correct
        )
        items.append(SimItem(sid, pid, r["problem"], list(r["steps"]), correct, int(r["label"]), exs))
    return items


def _mrben_rows(data: dict) -> list[dict]:
    rows = []
    for uuid, sols in data.items():
        for s in sols:
            fe = s.get("Model_Solution_First_Error_Step")
            label = -1 if fe in (None, "N/A", "") else int(fe) - 1
            problem = (s.get("Question") or "") + ("\n" + s["Options"] if s.get("Options") else "")
            rows.append(
                {
                    "id": f"mrben:{uuid}:{s.get('Sampled_Model')}",
                    "problem_id": uuid,
                    "problem": problem,
                    "steps": list(s["Model_Solution_Steps"]),
                    "label": label,
                    "final_answer_correct": s.get("Model_Solution_Correctness") == "correct",
                }
            )
    return rows


def stepwise_records(df) -> list[dict]:
    """Regroup prm800k-stepwise rows (one rated candidate per row, in file order) into PRM800K-like records.

    A record starts where the prefix length drops or the problem changes; a step is the run of rows
    with the same prefix length. Non-human rows are completions, the human row the human
    completion, and the preferred non-human row the chosen completion.
    """
    records: list[dict] = []
    cur: dict | None = None
    last_key = None
    for instr, responses, nxt, is_human, is_pref, rating in zip(
        df["instruction"],
        df["responses"],
        df["next_response"],
        df["is_human_response"],
        df["is_preferred_response"],
        df["rating"],
        strict=True,
    ):
        depth = len(responses)
        key = (instr, depth)
        if cur is None or instr != cur["question"]["problem"] or (last_key is not None and depth < last_key[1]):
            cur = {"question": {"problem": instr}, "label": {"steps": []}, "_n": len(records)}
            records.append(cur)
            last_key = None
        if key != last_key:
            cur["label"]["steps"].append({"completions": [], "human_completion": None, "chosen_completion": None})
            last_key = key
        st = cur["label"]["steps"][-1]
        r = None if rating is None or (isinstance(rating, float) and math.isnan(rating)) else int(rating)
        if is_human:
            st["human_completion"] = {"text": nxt, "rating": r, "source": "human", "flagged": False}
        else:
            if is_pref:
                st["chosen_completion"] = len(st["completions"])
            st["completions"].append({"text": nxt, "rating": r, "flagged": False})
    for rec in records:
        rec["labeler"] = "stepwise"
        rec["timestamp"] = str(rec.pop("_n"))
    return records


def load_items(path: str | Path, *, limit: int | None = None) -> list[SimItem]:
    """Load a PRM800K JSONL, a ProcessBench JSON array, an MR-Ben JSON object or a prm800k-stepwise Parquet."""
    path = Path(path)
    name = path.stem
    if path.suffix == ".parquet":
        import pandas as pd

        items = items_from_prm800k_records(stepwise_records(pd.read_parquet(path)), source=name)
    elif path.suffix == ".jsonl":
        with open(path, encoding="utf-8") as f:
            items = items_from_prm800k_records([json.loads(line) for line in f if line.strip()], source=name)
    else:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict):
            items = items_from_first_error(_mrben_rows(data), source=name)
        else:
            items = items_from_first_error(data, source=name)
    return items[:limit] if limit else items
