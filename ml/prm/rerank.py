"""Best-of-N reranking evaluation (PRM800K's figure): for problems with several graded solutions,
draw N of them, pick one by a scorer, and count how often the pick is correct, as N grows.

Scorers: PRM product and PRM min (per solution, over steps, of P(not -1)), a reward model, and
majority vote over final answers (ties broken at random); `random` (any one of the N) is the
baseline. No Django: the command `rerank_eval` loads the models and writes the table and plot.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from prm800k.labels import final_answer_from_text


@dataclass(frozen=True, slots=True)
class Candidate:
    steps: tuple[str, ...]
    answer: str | None
    correct: bool


Scorer = Callable[[str, Sequence[Candidate]], np.ndarray]  # higher is better


def _mrben_answer(steps: Sequence[str]) -> str | None:
    match = re.search(r"Choice_?\s*([A-D])", steps[-1]) if steps else None
    return match.group(1) if match else None


def load_candidates(path: Path) -> dict[str, list[Candidate]]:
    """Graded solutions by problem, from MR-Ben (`{uuid: [solutions]}`), ProcessBench (a JSON array),
    or JSON lines `{"problem", "steps", "answer"?, "correct"}`."""
    text = path.read_text(encoding="utf-8")
    groups: dict[str, list[Candidate]] = defaultdict(list)
    if path.suffix == ".json":
        data = json.loads(text)
        items = [s for group in data.values() for s in group] if isinstance(data, dict) else data
        for item in items:
            if "Model_Solution_Steps" in item:  # MR-Ben
                steps = tuple(item["Model_Solution_Steps"])
                problem = item["Question"] + "\n" + item.get("Options", "")
                groups[problem].append(
                    Candidate(steps, _mrben_answer(steps), item["Model_Solution_Correctness"] == "correct")
                )
            else:  # ProcessBench
                steps = tuple(item["steps"])
                answer = final_answer_from_text(steps[-1]) if steps else None
                groups[item["problem"]].append(Candidate(steps, answer, bool(item["final_answer_correct"])))
        return dict(groups)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        item = json.loads(line)
        try:
            steps = tuple(item["steps"])
            answer = item.get("answer") or (final_answer_from_text(steps[-1]) if steps else None)
            groups[item["problem"]].append(Candidate(steps, answer, bool(item["correct"])))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: needs problem, steps and correct ({exc})") from None
    return dict(groups)


def majority_pick(candidates: Sequence[Candidate], rng: random.Random) -> int:
    answers = Counter(c.answer for c in candidates if c.answer is not None)
    if not answers:
        return rng.randrange(len(candidates))
    top = max(answers.values())
    winner = rng.choice(sorted(a for a, n in answers.items() if n == top))
    return rng.choice([i for i, c in enumerate(candidates) if c.answer == winner])


def best_of_n(
    groups: dict[str, list[Candidate]],
    scorers: dict[str, Scorer],
    *,
    sizes: Sequence[int],
    samples: int = 50,
    seed: int = 0,
    min_candidates: int = 0,
) -> dict:
    """Accuracy of each method at each N over problems with at least N candidates (and at least
    `min_candidates`: one problem set for every N, so the columns compare): `samples` random draws
    of N per problem (scores computed once per candidate). `oracle` is the share of draws with a
    right solution among the N (no method can beat it)."""
    rng = random.Random(seed)
    scores = {name: {p: scorer(p, cands) for p, cands in groups.items()} for name, scorer in scorers.items()}
    table: dict[str, dict[int, float]] = defaultdict(dict)
    counts: dict[int, int] = {}
    for n in sizes:
        eligible = [p for p, cands in groups.items() if len(cands) >= max(n, min_candidates)]
        counts[n] = len(eligible)
        if not eligible:
            continue
        hits: dict[str, int] = defaultdict(int)
        draws = 0
        for problem in eligible:
            cands = groups[problem]
            for _ in range(samples):
                pick = rng.sample(range(len(cands)), n)
                chosen = [cands[i] for i in pick]
                draws += 1
                hits["random"] += sum(c.correct for c in chosen) / n  # expected accuracy of any one
                hits["majority"] += chosen[majority_pick(chosen, rng)].correct
                hits["oracle"] += any(c.correct for c in chosen)
                for name in scorers:
                    values = scores[name][problem][pick]
                    hits[name] += chosen[int(np.argmax(values))].correct
        for name, k in hits.items():
            table[name][n] = k / draws
    return {
        "sizes": list(sizes),
        "problems": counts,
        "min_candidates": min_candidates,
        "accuracy": {k: dict(v) for k, v in table.items()},
    }


def markdown_table(result: dict) -> str:
    sizes = [n for n in result["sizes"] if result["problems"].get(n)]
    lines = ["| method | " + " | ".join(f"N={n}" for n in sizes) + " |", "|---|" + "---|" * len(sizes)]
    for name, row in result["accuracy"].items():
        lines.append(f"| {name} | " + " | ".join(f"{row[n]:.3f}" for n in sizes) + " |")
    lines.append("| problems | " + " | ".join(str(result["problems"][n]) for n in sizes) + " |")
    # a requested N that no problem reaches had its column left out without a word (`--sizes 1,2,4`
    # printed N=1 and N=2 only), as if it had been ignored
    missing = [n for n in result["sizes"] if not result["problems"].get(n)]
    if missing:
        floor = result.get("min_candidates") or 0
        least = f", nor at least --min-candidates {floor}" if floor else ""
        names = ", ".join(f"N={n}" for n in missing)
        lines.append(f"\nNot shown: {names} (no problem has that many graded solutions{least}).")
    return "\n".join(lines) + "\n"


def plot(result: dict, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [n for n in result["sizes"] if result["problems"].get(n)]
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, row in result["accuracy"].items():
        ax.plot(sizes, [row[n] for n in sizes], marker="o", label=name)
    ax.set_xlabel("N (solutions per problem)")
    ax.set_ylabel("best-of-N accuracy")
    ax.set_xticks(sizes)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
