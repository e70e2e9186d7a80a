"""Best-of-N on real graded solutions: MR-Ben math (306 problems x 3 solutions by Claude2, GPT-3.5
and mistral-medium, human-judged correctness). The PRM is trained on ProcessBench's expert step
labels (all three splits; steps before the first error +1, the first error -1) and the reward
model on ProcessBench pairs (right vs wrong final answer of one problem); neither saw MR-Ben.
Then `manage.py rerank_eval` writes bench/results/rerank.{md,json,png}.

    .venv/bin/python bench/bench_rerank.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"

import torch  # noqa: E402

from bench.bench_reward import SPLITS, real_pairs  # noqa: E402
from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.examples import examples_from_steps  # noqa: E402
from ml.prm.reward import RewardConfig, save_reward_checkpoint, train_reward_model  # noqa: E402
from ml.prm.train import save_checkpoint, train_prm  # noqa: E402


def main() -> None:
    if not (DATA / "processbench").is_dir() or not (DATA / "mr-ben" / "math.json").is_file():
        sys.exit(f"{DATA}: ProcessBench or MR-Ben is missing")
    torch.set_num_threads(1)
    examples, pairs = [], []
    for split in SPLITS:
        for j, record in enumerate(json.loads((DATA / "processbench" / f"{split}.json").read_text())):
            examples += examples_from_steps(
                record["problem"],
                record["steps"],
                record["label"],
                solution_id=f"{split}-{j}",
                problem_id=record["problem"],
            )
        pairs += real_pairs(DATA / "processbench", split)
    tmp = Path(tempfile.mkdtemp(prefix="rerank-"))
    config = PRMConfig(ensemble_size=2, max_epochs=8)
    save_checkpoint(train_prm(examples, config), tmp / "prm.pt")
    save_reward_checkpoint(train_reward_model(pairs, RewardConfig()), tmp / "reward.pt")
    print(f"trained a PRM on {len(examples)} ProcessBench steps and a reward model on {len(pairs)} pairs", flush=True)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.test")}
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "rerank_eval",
            "--data",
            str(DATA / "mr-ben" / "math.json"),
            "--prm-checkpoint",
            str(tmp / "prm.pt"),
            "--reward-checkpoint",
            str(tmp / "reward.pt"),
            "--sizes",
            "1,2,3",
            "--samples",
            "30",
            "--out",
            str(ROOT / "bench" / "results" / "rerank"),
        ],
        check=True,
        env=env,
        cwd=ROOT,
    )
    md = ROOT / "bench" / "results" / "rerank.md"
    table = md.read_text().split("\n", 2)[2]
    md.write_text(
        "# Best-of-N on MR-Ben math (real graded solutions)\n\n"
        "306 multiple-choice problems, 3 solutions each (Claude2, GPT-3.5, mistral-medium), correctness judged by\n"
        "people; only ~16% of the solutions are correct. The PRM (hashed n-grams, 2-head ensemble) was trained on\n"
        f"{len(examples)} ProcessBench expert step labels, the reward model on {len(pairs)} ProcessBench pairs\n"
        "(right vs wrong final answer); neither saw MR-Ben. 30 random draws of N per problem; `random` is the\n"
        "expected accuracy of any one of the N. Made by `bench/bench_rerank.py` (`manage.py rerank_eval`);\n"
        "plot: `rerank.png`.\n\n" + table
    )


if __name__ == "__main__":
    main()
