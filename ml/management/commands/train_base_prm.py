"""Train a base PRM on labeled files (e.g. public PRM800K) for projects to fine-tune from.

python manage.py train_base_prm --dataset stepwise --out var/models/base-prm800k.pt
ML_TRAINING_CONFIG='{"base_checkpoint": "var/models/base-prm800k.pt"}'   # then every run starts there
"""

import json
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from ml.prm.data import DATASETS


class Command(BaseCommand):
    help = (
        "Train a PRM on labeled files (PRM800K JSONL, prm800k-stepwise Parquet, ProcessBench or MR-Ben JSON, or a "
        "shared data set by name) and write its checkpoint, for PRMConfig.base_checkpoint (warm start)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--data", type=Path, action="append", default=[], help="A labeled file (repeatable).")
        parser.add_argument("--dataset", action="append", default=[], help=f"A shared data set: {list(DATASETS)}.")
        parser.add_argument("--out", type=Path, required=True, help="Where the checkpoint is written.")
        parser.add_argument("--limit", type=int, default=0, help="At most N solutions, drawn with a fixed seed.")
        parser.add_argument("--config", default="{}", help="PRMConfig overrides as JSON (keep the projects' ones).")

    def handle(self, *args, **o) -> None:
        from ml.prm.data import load_dataset
        from ml.prm.sim_data import load_items
        from ml.prm.train import save_checkpoint, train_prm
        from ml.services import training_config

        if not o["data"] and not o["dataset"]:
            raise CommandError("Name at least one --data FILE or --dataset NAME.")
        missing = [str(p) for p in o["data"] if not p.is_file()]
        unknown = [d for d in o["dataset"] if d not in DATASETS]
        if missing or unknown:
            raise CommandError(f"--data: no such file {missing}" if missing else f"--dataset: unknown {unknown}")
        try:
            overrides = json.loads(o["config"])
            if not isinstance(overrides, dict):  # was a TypeError traceback ('list' object is not a mapping)
                raise ValueError(f"must be a JSON object, e.g. '{{\"max_epochs\": 5}}', got {o['config']!r}")
            config = training_config(overrides={**overrides, "base_checkpoint": ""})
        except (json.JSONDecodeError, ValueError) as exc:
            raise CommandError(f"--config: {exc}") from None
        items = [it for p in o["data"] for it in load_items(p)] + [it for d in o["dataset"] for it in load_dataset(d)]
        if o["limit"] and len(items) > o["limit"]:
            keep = np.random.default_rng(0).permutation(len(items))[: o["limit"]]
            items = [items[i] for i in sorted(keep)]
        examples = [e for it in items for e in it.labeled]
        if not examples:
            raise CommandError("The files hold no rated steps.")
        self.stderr.write(f"training on {len(examples):,} rated steps of {len(items):,} solutions ...")
        checkpoint = train_prm(examples, config)
        o["out"].parent.mkdir(parents=True, exist_ok=True)
        save_checkpoint(checkpoint, o["out"])
        held = checkpoint["metrics"].get("heldout", {})
        score = lambda key: "n/a" if held.get(key) is None else f"{held[key]:.3f}"  # noqa: E731
        self.stdout.write(
            f"{o['out']}: {checkpoint['label_count']:,} labels, held-out AUROC(-1) {score('auroc_negative')}, "
            f"first-error F1 {score('first_error_f1')} on {held.get('n_solutions', 0)} solutions"
        )
