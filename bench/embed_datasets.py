"""Embed every step and problem text of the shared data sets once (MiniLM), stored under bench/out/emb/.

    PYTHONPATH=. .venv/bin/python bench/embed_datasets.py [--datasets gsm8k,math,...] [--threads 2]

Prints throughput; the simulation and the ProcessBench table read the store.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ml.prm.data import DATASETS, load_dataset  # noqa: E402
from ml.prm.embeddings import EmbeddingStore, MiniLMEncoder  # noqa: E402

STORE = Path(__file__).resolve().parent / "out" / "emb" / "minilm"


def texts_of(items) -> list[str]:
    out = []
    for it in items:
        out.append(it.problem)
        out.extend(it.steps)
        out.extend(e.step for e in it.labeled)
        out.extend(p for e in it.labeled for p in e.previous[-1:])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    store = EmbeddingStore(STORE)
    enc = MiniLMEncoder()
    for name in a.datasets.split(","):
        items = load_dataset(name)
        texts = texts_of(items)
        t0 = time.perf_counter()
        n = store.ensure(texts, enc, log=lambda s, n=name: print(n, s, flush=True))
        dt = time.perf_counter() - t0
        print(f"{name}: {len(set(texts))} distinct texts, {n} new in {dt:.0f}s", flush=True)


if __name__ == "__main__":
    main()
