"""Offline active-learning simulation (ml.prm.simulate): which strategy buys the most PRM quality per label."""

import json
import os
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ml.prm.selection import STRATEGIES
from ml.prm.sim_data import load_items
from ml.prm.simulate import plot_curves, simulate, simulation_config


class Command(BaseCommand):
    help = (
        "Simulate labeling rounds with an oracle annotator on a labeled file (PRM800K JSONL, ProcessBench JSON, "
        "prm800k-stepwise Parquet, MR-Ben JSON); writes results JSON and a PNG of the curves beside it."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--data", required=True, type=Path, help="The labeled file.")
        parser.add_argument("--strategies", default="random,uncertainty,convincing_wrong", help="Comma-separated.")
        parser.add_argument("--rounds", type=int, default=8, help="Labeling rounds after the seed set.")
        parser.add_argument("--batch", type=int, default=40, help="Solutions labeled per round.")
        parser.add_argument("--seed-size", type=int, default=40, help="Random solutions labeled before round 1.")
        parser.add_argument("--seeds", type=int, default=3, help="Repetitions (seeds 0..N-1); curves are averaged.")
        parser.add_argument("--heldout", type=float, default=0.2, help="Share of problems never offered.")
        parser.add_argument("--limit", type=int, default=0, help="Use only the first N solutions of the file.")
        parser.add_argument("--config", default="", help="Training overrides as JSON, e.g. '{\"max_epochs\": 8}'.")
        parser.add_argument("--out", required=True, type=Path, help="results.json; the PNG goes beside it.")
        parser.add_argument("--quiet", action="store_true", help="No progress lines.")

    def handle(self, *args, data: Path, strategies: str, out: Path, **o) -> None:
        names = [s.strip() for s in strategies.split(",") if s.strip()]
        bad = [s for s in names if s not in STRATEGIES]
        if bad or not names:
            raise CommandError(f"Unknown strategies {bad}; choose from {', '.join(STRATEGIES)}.")
        if not data.exists():
            raise CommandError(f"No such file: {data}")
        if o["seeds"] < 1 or o["rounds"] < 0 or o["batch"] < 1:
            raise CommandError("--seeds and --batch must be at least 1, --rounds at least 0.")
        try:
            config = simulation_config(**(json.loads(o["config"]) if o["config"] else {}))
        except (TypeError, json.JSONDecodeError) as exc:
            raise CommandError(f"--config: {exc}") from None
        items = load_items(data, limit=o["limit"] or None)
        if not items:
            raise CommandError(f"No labeled solutions in {data}.")
        log = None if o["quiet"] else (lambda line: self.stderr.write(line))
        results = simulate(
            items,
            strategies=names,
            rounds=o["rounds"],
            batch=o["batch"],
            seed_size=o["seed_size"],
            seeds=tuple(range(o["seeds"])),
            heldout_fraction=o["heldout"],
            config=config,
            log=log,
        )
        results["meta"]["data"] = str(data)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".partial")
        tmp.write_text(json.dumps(results, indent=1))
        os.replace(tmp, out)
        png = plot_curves(results, out.with_suffix(".png"), title=data.name)
        for name, r in results["strategies"].items():
            last = r["curve"][-1] if r["curve"] else {"labels": 0, "metrics": {}}
            nan = float("nan")
            f1 = last["metrics"].get("first_error_f1")
            auc = last["metrics"].get("auroc_negative")
            eff = r.get("label_efficiency_vs_random")
            self.stdout.write(
                f"{name:17s} labels {last['labels']:8.0f}  first-error F1 {nan if f1 is None else f1:.3f}  "
                f"AUROC(-1) {nan if auc is None else auc:.3f}  efficiency vs random {nan if eff is None else eff:.2f}"
            )
        self.stdout.write(f"Wrote {out} and {png} ({results['meta']['seconds']}s).")
