"""The shared real data sets by name (ProcessBench splits, PRM800K stepwise, MR-Ben), loaded as SimItems."""

from __future__ import annotations

import os
from pathlib import Path

DATA = Path(os.environ.get("STEPLABEL_SHARED_DATA", Path(__file__).resolve().parents[2] / ".." / "shared" / "data"))

DATASETS = {
    "gsm8k": ["processbench/gsm8k.json"],
    "math": ["processbench/math.json"],
    "olympiadbench": ["processbench/olympiadbench.json"],
    "mrben": ["mr-ben/math.json"],
    "stepwise": [
        "prm800k-stepwise/phase1_train_plus.stepwise-critic.parquet",
        "prm800k-stepwise/phase1_test.stepwise-critic.parquet",
    ],
}


def dataset_paths(name: str, root: Path | None = None) -> list[Path]:
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose from {', '.join(DATASETS)}")
    return [Path(root or DATA) / p for p in DATASETS[name]]


def load_dataset(name: str, root: Path | None = None):
    from ml.prm.sim_data import load_items

    items = []
    for p in dataset_paths(name, root):
        items.extend(load_items(p))
    return items
