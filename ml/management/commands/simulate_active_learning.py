"""Offline active-learning simulation (ml.prm.active_sim): which strategy buys the most PRM quality per label."""

import json
import os
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ml.prm.active_sim import STRATEGIES
from ml.prm.data import DATASETS

DEFAULT_OUT = Path("bench") / "out" / "sim"
DEFAULT_RESULTS = Path("bench") / "results"
FRONTEND_EVIDENCE = Path("frontend") / "src" / "dashboard" / "simulation_evidence.json"


class Command(BaseCommand):
    help = (
        "Simulate labeling rounds with an oracle annotator on the shared data sets (or --data FILE: PRM800K JSONL, "
        "ProcessBench JSON, prm800k-stepwise Parquet, MR-Ben JSON); writes one JSON per set, then "
        "simulation.md with efficiency (bootstrap CI) and normalised AULC per strategy, and PNG curves."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--datasets", default=",".join(DATASETS), help=f"Comma-separated from {list(DATASETS)}.")
        parser.add_argument("--data", type=Path, help="One labeled file instead of --datasets (named by its stem).")
        parser.add_argument("--strategies", default=",".join(STRATEGIES), help="Comma-separated.")
        parser.add_argument("--seeds", type=int, default=5, help="Repetitions (seeds 0..N-1).")
        parser.add_argument("--rounds", type=int, default=10, help="Labeling rounds after the random seed set.")
        parser.add_argument("--round-share", type=float, default=0.05, help="Step labels per round, share of the pool.")
        parser.add_argument("--seed-share", type=float, default=0.05, help="Random step labels before the first model.")
        parser.add_argument("--control-share", type=float, default=0.1, help="Random share of every other strategy.")
        parser.add_argument("--vault", action="store_true", help="Evaluate on the untouched 20%% of problems (final).")
        parser.add_argument(
            "--blocks",
            default="hashed,answer",
            help="Feature blocks: hashed, minilm (stored embeddings), answer (the graded answer, as the app's "
            "PRM reads it: PRMConfig.answer_input).",
        )
        parser.add_argument(
            "--calibration",
            default="reweighted",
            choices=["reweighted", "all", "random"],
            help="The first-error threshold: chosen on the labeled solutions weighted to look like the pool "
            "(default), unweighted, or on the randomly drawn ones only.",
        )
        parser.add_argument(
            "--decoding",
            default="forced_wrong",
            choices=["forced_wrong", "per_grade", "threshold", "map"],
            help="First-error prediction: forced_wrong (default, as the app's PRM reads it), the first step over "
            "a P(-1) threshold chosen per graded-answer stratum (right, ungraded), and a graded-wrong solution, "
            "which always holds an error, at its most probable first error; per_grade, a threshold for the "
            "wrong stratum too; threshold, one threshold for all; or map, the most probable first error where "
            "its margin over 'no error' passes a cut (all chosen on the labels).",
        )
        parser.add_argument("--limit", type=int, default=0, help="Use only the first N solutions of each set.")
        parser.add_argument("--head", default="{}", help="Head overrides as JSON, e.g. '{\"k\": 4}'.")
        parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT, help="Where the per-set JSON goes.")
        parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="Where simulation.md goes.")
        parser.add_argument(
            "--prior",
            default="",
            help="Warm start: a head fitted on other sets' labels (comma-separated, e.g. stepwise) starts each round.",
        )
        parser.add_argument("--prior-limit", type=int, default=4000, help="Solutions drawn from --prior (seeded).")
        parser.add_argument("--quiet", action="store_true", help="No progress lines.")

    def handle(self, *args, **o) -> None:
        from ml.prm.active_sim import simulate
        from ml.prm.al_report import write_report
        from ml.prm.data import load_dataset
        from ml.prm.embeddings import EmbeddingStore
        from ml.prm.head import HeadConfig
        from ml.prm.sim_data import load_items

        names = [s.strip() for s in o["strategies"].split(",") if s.strip()]
        bad = [s for s in names if s not in STRATEGIES]
        if bad or not names or "random" not in names:
            raise CommandError(f"--strategies: unknown {bad}; choose from {', '.join(STRATEGIES)}, random included.")
        # --rounds 0: no strategy picks anything, so every one came out "1.00x" of random.
        if o["seeds"] < 1 or o["rounds"] < 1 or not 0 < o["round_share"] <= 1 or not 0 < o["seed_share"] <= 1:
            raise CommandError("--seeds and --rounds must be >= 1, --round-share and --seed-share in (0, 1].")
        try:
            head = HeadConfig(**json.loads(o["head"]))
        except (TypeError, json.JSONDecodeError) as exc:
            raise CommandError(f"--head: {exc}") from None
        if o["data"] is not None:
            if not o["data"].exists():
                raise CommandError(f"--data: no such file: {o['data']}")
            sets = {o["data"].stem: lambda: load_items(o["data"])}
        else:
            wanted = [s.strip() for s in o["datasets"].split(",") if s.strip()]
            unknown = [s for s in wanted if s not in DATASETS]
            if unknown or not wanted:
                raise CommandError(f"--datasets: unknown {unknown}; choose from {', '.join(DATASETS)}.")
            sets = {s: (lambda s=s: load_dataset(s)) for s in wanted}
        if Path(o["results"]) == DEFAULT_RESULTS:
            # The README's `--datasets gsm8k,math --seeds 5` rewrote the shipped page and the dashboard's
            # evidence from those two sets alone (every *.json in --out-dir makes the page).
            after = {p.stem for p in o["out_dir"].glob("*.json")} | {
                f"{name}{'_vault' if o['vault'] else ''}" for name in sets
            }
            short = [name for name in DATASETS if name not in after]
            if o["data"] is not None or short:
                built = "from a file of your own" if o["data"] is not None else f"without {', '.join(short)}"
                raise CommandError(
                    f"--results {DEFAULT_RESULTS} is the shipped simulation.md and the dashboard's evidence "
                    f"({FRONTEND_EVIDENCE}), built from every data set; this run would rebuild them {built}. "
                    "For a run of your own give --results DIR and --out-dir DIR (the shipped protocol is in "
                    "bench/results/simulation_notes.md)."
                )
        blocks = [b.strip() for b in o["blocks"].split(",") if b.strip()]
        prior_items: list = []
        priors = [p.strip() for p in o["prior"].split(",") if p.strip()]
        if priors:
            unknown = [p for p in priors if p not in DATASETS]
            if unknown:
                raise CommandError(f"--prior: unknown {unknown}; choose from {', '.join(DATASETS)}.")
            import numpy as np

            pool = [it for p in priors for it in load_dataset(p)]
            keep = np.random.default_rng(0).permutation(len(pool))[: o["prior_limit"]]
            prior_items = [pool[i] for i in sorted(keep)]
        store = EmbeddingStore(Path(os.environ.get("ML_EMBEDDING_DIR", "var/embeddings/minilm")))
        log = None if o["quiet"] else (lambda line: self.stderr.write(line))
        o["out_dir"].mkdir(parents=True, exist_ok=True)
        for name, load in sets.items():
            items = load()
            if o["limit"]:
                items = items[: o["limit"]]
            if not items:
                raise CommandError(f"{name}: no labeled solutions.")
            if name in priors:
                raise CommandError("--prior must name other data sets than the one simulated.")
            if "minilm" in blocks:
                from ml.prm.embeddings import MiniLMEncoder
                from ml.prm.step_features import texts_for

                store.ensure(texts_for([(it.problem, None, s, 0) for it in items for s in it.steps]), MiniLMEncoder())
            res = simulate(
                items,
                store,
                strategies=names,
                seeds=range(o["seeds"]),
                rounds=o["rounds"],
                round_share=o["round_share"],
                seed_share=o["seed_share"],
                control_share=o["control_share"],
                vault=o["vault"],
                calibration=o["calibration"],
                decoding=o["decoding"],
                blocks=blocks,
                head=head,
                prior_items=prior_items,
                log=None if log is None else (lambda s, n=name: log(f"{n} {s}")),
            )
            res["meta"]["data"] = name
            res["meta"]["prior_data"] = ",".join(priors)
            path = o["out_dir"] / f"{name}{'_vault' if o['vault'] else ''}.json"
            tmp = path.with_suffix(".partial")
            tmp.write_text(json.dumps(res))
            os.replace(tmp, path)
            self.stdout.write(f"{name}: {res['meta']['seconds']}s -> {path}")
        # the dashboard's caveats are built from the shipped results only, never from a scratch run
        evidence = FRONTEND_EVIDENCE if Path(o["results"]) == DEFAULT_RESULTS else None
        write_report(o["out_dir"], o["results"], evidence=evidence)
        self.stdout.write(f"Wrote {o['results'] / 'simulation.md'}.")
