"""Best-of-N on real graded solutions, through `manage.py rerank_eval`:

1. PRM800K phase 1 (prm800k-stepwise Parquet): every answer step a labeler rated, after the accepted
   steps before it, is one complete solution (ml/prm/graded.py), so a problem has up to ~20 graded
   solutions: N = 1, 2, 4, 8, 16. The PRM is trained on ProcessBench's and MR-Ben's step labels, the
   reward model (features shape + prm) on their right-vs-wrong pairs; neither saw a PRM800K problem.
   -> bench/results/rerank.{md,json,png}
2. MR-Ben math (3 solutions per problem): N = 1, 2, 3; PRM and reward model trained on ProcessBench
   and PRM800K phase 1 instead. -> bench/results/rerank_mrben.{md,json,png}

    nice -n 15 .venv/bin/python bench/bench_rerank.py

The shared folder has no file with more solutions per problem: its PRM800K phase-2 records are 9
lines (6 solutions of one problem).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"

import torch  # noqa: E402

from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.data import DATA  # noqa: E402
from ml.prm.graded import right_wrong_pairs, shared_groups  # noqa: E402
from ml.prm.reward import RewardConfig, save_reward_checkpoint, train_reward_model  # noqa: E402
from ml.prm.reward_features import prm_step_risk  # noqa: E402
from ml.prm.sim_data import load_items  # noqa: E402
from ml.prm.train import build_prm, save_checkpoint, train_prm  # noqa: E402

STEP_FILES = {
    "processbench": ["processbench/gsm8k.json", "processbench/math.json", "processbench/olympiadbench.json"],
    "mr-ben": ["mr-ben/math.json"],
    "prm800k-phase1": [
        "prm800k-stepwise/phase1_train_plus.stepwise-critic.parquet",
        "prm800k-stepwise/phase1_test.stepwise-critic.parquet",
    ],
}
PRM_CONFIG = PRMConfig(ensemble_size=2, max_epochs=8)
REWARD_CONFIG = RewardConfig(features=("shape", "prm"))


def models_without(groups: dict, target: str, out: Path) -> str:
    """Train the PRM and the reward model on every source but `target` (and no problem of it)."""
    held = set(groups[target])
    steps = [
        e
        for source, files in STEP_FILES.items()
        if source != target
        for f in files
        for it in load_items(DATA / f)
        if it.problem not in held
        for e in it.labeled
        if e.target is not None
    ]
    checkpoint = train_prm(steps, PRM_CONFIG)
    save_checkpoint(checkpoint, out / "prm.pt")
    pairs = [p for s, g in groups.items() if s != target for p in right_wrong_pairs(g) if p.problem not in held]
    risk = prm_step_risk(build_prm(checkpoint))
    save_reward_checkpoint(train_reward_model(pairs, REWARD_CONFIG, step_risk=risk), out / "reward.pt")
    sources = ", ".join(s for s in groups if s != target)
    return f"{len(steps)} step labels and {len(pairs)} right-vs-wrong pairs of {sources}"


def same_step(groups: dict[str, list]) -> dict[str, list]:
    """Per problem, the largest set of answer alternatives after the same accepted steps: solutions
    that differ only in their last step, so length tells nothing."""
    out = {}
    for problem, graded in groups.items():
        by_prefix: dict = {}
        for g in graded:
            by_prefix.setdefault(g.prefix, []).append(g)
        out[problem] = max(by_prefix.values(), key=len)
    return out


def write_jsonl(groups: dict, target: str, path: Path) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for problem, graded in groups[target].items():
            for g in graded:
                row = {"problem": problem, "steps": list(g.steps), "answer": g.answer, "correct": g.correct}
                handle.write(json.dumps(row) + "\n")


def rerank(data: Path, models: Path, sizes: str, out: Path, min_candidates: int = 0) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.test")}
    command = [sys.executable, str(ROOT / "manage.py"), "rerank_eval", "--data", str(data)]
    command += ["--prm-checkpoint", str(models / "prm.pt"), "--reward-checkpoint", str(models / "reward.pt")]
    command += ["--sizes", sizes, "--samples", "50", "--out", str(out), "--min-candidates", str(min_candidates)]
    subprocess.run(command, check=True, env=env, cwd=ROOT)


def describe(out: Path, title: str, intro: str) -> None:
    md = out.with_suffix(".md")
    table = md.read_text().split("\n", 2)[2]
    md.write_text(f"# {title}\n\n{intro}\n\n{table}")


def main() -> None:
    if not all((DATA / f).is_file() for files in STEP_FILES.values() for f in files):
        sys.exit(f"{DATA}: ProcessBench, MR-Ben or prm800k-stepwise is missing")
    torch.set_num_threads(1)
    groups = shared_groups(DATA)
    tmp = Path(tempfile.mkdtemp(prefix="rerank-"))
    common = (
        "`random` is the expected accuracy of any one of the N drawn; `majority` votes over final answers "
        "(ties at random); `prm_product` / `prm_min` pick by the PRM's product / minimum of P(not -1) over "
        "steps; `reward` by the Bradley-Terry reward model (features shape + prm). 50 random draws of N "
        "solutions per problem with at least N; `problems` says how many. Made by `nice -n 15 .venv/bin/python "
        "bench/bench_rerank.py` (`manage.py rerank_eval`)."
    )
    t0 = time.perf_counter()
    (tmp / "p1").mkdir()
    trained = models_without(groups, "prm800k-phase1", tmp / "p1")
    write_jsonl(groups, "prm800k-phase1", tmp / "prm800k-phase1.jsonl")
    # One problem set per table, so its columns compare: problems with at least 8, then at least 16.
    rerank(tmp / "prm800k-phase1.jsonl", tmp / "p1", "1,2,4,8", RESULTS / "rerank", min_candidates=8)
    rerank(tmp / "prm800k-phase1.jsonl", tmp / "p1", "1,2,4,8,16", RESULTS / "rerank_n16", min_candidates=16)
    write_jsonl({"same": same_step(groups["prm800k-phase1"])}, "same", tmp / "prm800k-phase1-same-step.jsonl")
    rerank(tmp / "prm800k-phase1-same-step.jsonl", tmp / "p1", "1,2,4", RESULTS / "rerank_same_step", min_candidates=4)
    phase1 = groups["prm800k-phase1"]
    n_solutions = sum(len(g) for g in phase1.values())
    same = (RESULTS / "rerank_same_step.md").read_text().split("\n", 2)[2]
    wide = (RESULTS / "rerank_n16.md").read_text().split("\n", 2)[2]
    describe(
        RESULTS / "rerank",
        "Best-of-N on PRM800K phase 1 (real graded solutions)",
        f"{len(phase1)} problems, {n_solutions} complete solutions: every answer step that a PRM800K labeler "
        "rated, after the accepted steps before it (`ml/prm/graded.py`); graded against MATH-500's reference on "
        "the phase-1 test problems, else by the labeler's +1/-1 on the answer step. These are not independent "
        "samples: labelers rated several alternatives per step and went on until an answer was right, so wrong "
        "answers are mostly rejected alternatives at earlier steps (shorter solutions) and the right one ends the "
        "longest accepted path. Scores that favour short solutions (the PRM product multiplies one factor per "
        "step) are at a disadvantage here that independent samples would not give them. "
        f"Models trained on {trained}; none saw a PRM800K problem. {common} `oracle`: a right solution is among "
        "the N. The first table holds the problems with at least 8 solutions (plot: `rerank.png`), the second "
        "the problems with at least 16 (`rerank_n16.png`); each uses one problem set for all its columns.",
    )
    with (RESULTS / "rerank.md").open("a") as handle:
        handle.write("\nProblems with at least 16 solutions (plot: `rerank_n16.png`):\n\n" + wide)
        handle.write(
            "\nWithout the length artifact: per problem only the alternatives after the same accepted steps "
            "(they differ in the answer step alone), problems with at least 4 (plot: `rerank_same_step.png`):\n\n"
            + same
        )
    (RESULTS / "rerank_n16.md").unlink()
    (RESULTS / "rerank_same_step.md").unlink()
    (tmp / "mr").mkdir()
    trained = models_without(groups, "mr-ben", tmp / "mr")
    rerank(DATA / "mr-ben" / "math.json", tmp / "mr", "1,2,3", RESULTS / "rerank_mrben")
    describe(
        RESULTS / "rerank_mrben",
        "Best-of-N on MR-Ben math (real graded solutions)",
        "306 multiple-choice problems, 3 solutions each (Claude2, GPT-3.5, mistral-medium), correctness judged "
        f"by people; only ~16% of the solutions are right. Models trained on {trained}; neither saw MR-Ben. "
        f"{common} Plot: `rerank_mrben.png`.",
    )
    print(f"done in {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
