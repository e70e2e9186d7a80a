"""Run the active-learning simulation (ml.prm.active_sim) on the shared real data sets.

    .venv/bin/python bench/run_active_sim.py --datasets gsm8k,math --seeds 5 [--vault] [--strategies ...]

Embeddings come from the store bench/embed_datasets.py fills (missing texts are embedded first).
Writes bench/out/sim/<set>[_vault].json; bench/report_active_sim.py turns them into
bench/results/simulation.md and PNGs. The vault (20% of problems by hash) is for the final run only.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ml.prm.active_sim import STRATEGIES, simulate  # noqa: E402
from ml.prm.data import DATASETS, load_dataset  # noqa: E402
from ml.prm.embeddings import EmbeddingStore, MiniLMEncoder  # noqa: E402
from ml.prm.head import HeadConfig  # noqa: E402
from ml.prm.step_features import texts_for  # noqa: E402

OUT = ROOT / "bench" / "out" / "sim"
STORE = ROOT / "bench" / "out" / "emb" / "minilm"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--vault", action="store_true", help="evaluate on the untouched 20%% (final run only)")
    ap.add_argument("--head", default="{}", help="HeadConfig overrides as JSON")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tag", default="")
    ap.add_argument("--blocks", default="hashed", help="feature blocks: hashed, minilm or both (comma)")
    ap.add_argument("--round-share", type=float, default=0.05, help="labels per round, share of the pool's")
    ap.add_argument("--seed-share", type=float, default=0.05, help="random labels before the first model")
    a = ap.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    store = EmbeddingStore(STORE)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in a.datasets.split(","):
        items = load_dataset(name)
        texts = texts_for(
            [(it.problem, it.steps[i - 1] if i else None, s, i) for it in items for i, s in enumerate(it.steps)]
            + [(e.problem, e.previous[-1] if e.previous else None, e.step, 0) for it in items for e in it.labeled]
        )
        blocks = a.blocks.split(",")
        if "minilm" in blocks and store.missing(texts):
            store.ensure(texts, MiniLMEncoder(), log=print)
        t0 = time.perf_counter()
        res = simulate(
            items,
            store,
            strategies=a.strategies.split(","),
            seeds=range(a.seeds),
            rounds=a.rounds,
            vault=a.vault,
            blocks=blocks,
            round_share=a.round_share,
            seed_share=a.seed_share,
            head=HeadConfig(**json.loads(a.head)),
            log=lambda s, n=name: print(n, s, flush=True),
        )
        res["meta"]["data"] = name
        path = OUT / f"{name}{'_vault' if a.vault else ''}{a.tag}.json"
        tmp = path.with_suffix(".partial")
        tmp.write_text(json.dumps(res))
        os.replace(tmp, path)
        print(f"{name}: {time.perf_counter() - t0:.0f}s -> {path}", flush=True)


if __name__ == "__main__":
    main()
