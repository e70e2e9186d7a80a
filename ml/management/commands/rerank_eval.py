"""`manage.py rerank_eval --data FILE [--project SLUG] [--reward-project SLUG]`: best-of-N accuracy
by PRM product, PRM min, the reward model and majority vote as N grows (ml.prm.rerank), written as
a table (Markdown + JSON) and a plot under --out."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.models import Project
from ml.prm import rerank
from ml.prm.rerank import Candidate


def prm_scorers(prm) -> dict[str, rerank.Scorer]:
    from ml.services.prm_lib import lib

    cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def both(problem: str, cands: Sequence[Candidate]) -> tuple[np.ndarray, np.ndarray]:
        if problem not in cache:
            items = [(problem, c.steps[:i], step) for c in cands for i, step in enumerate(c.steps)]
            scores = prm.score_rows(lib.featurize(prm.featurizer, items))
            cache[problem] = lib.solution_scores(scores.p_negative, [len(c.steps) for c in cands])
        return cache[problem]

    return {"prm_product": lambda p, c: both(p, c)[0], "prm_min": lambda p, c: both(p, c)[1]}


def reward_scorer(model) -> rerank.Scorer:
    return lambda problem, cands: model.rewards([(problem, list(c.steps)) for c in cands])


class Command(BaseCommand):
    help = "Best-of-N accuracy by PRM product, PRM min, reward model and majority vote, as N grows."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--data", type=Path, required=True, help="Graded solutions: MR-Ben, ProcessBench or JSONL.")
        parser.add_argument(
            "--project", type=str.lower, help="A steps project whose active PRM scores (prm_product, prm_min)."
        )
        parser.add_argument(
            "--reward-project", type=str.lower, help="A compare project whose active reward model scores (reward)."
        )
        parser.add_argument("--prm-checkpoint", type=Path, help="A PRM checkpoint file instead of --project.")
        parser.add_argument("--reward-checkpoint", type=Path, help="A reward model file instead of --reward-project.")
        parser.add_argument("--sizes", default="1,2,4,8,16", help="Values of N, comma-separated.")
        parser.add_argument("--samples", type=int, default=50, help="Random draws of N per problem.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--min-candidates",
            type=int,
            default=0,
            help="Only problems with at least this many solutions, for every N (one problem set for all columns).",
        )
        parser.add_argument("--out", type=Path, default=Path("bench/results/rerank"), help="Output path prefix.")

    def handle(self, *args, data: Path, out: Path, **options) -> None:
        if not data.is_file():
            raise CommandError(f"{data}: no such file")
        try:
            sizes = sorted({int(n) for n in options["sizes"].split(",") if n.strip()})
        except ValueError:
            raise CommandError(f"--sizes must be integers, got {options['sizes']!r}") from None
        if not sizes or sizes[0] < 1 or options["samples"] < 1:
            raise CommandError("--sizes must be positive integers and --samples at least 1")
        try:
            groups = rerank.load_candidates(data)
        except (ValueError, KeyError) as exc:
            raise CommandError(f"{data}: {exc}") from None
        if not any(len(c) >= 2 for c in groups.values()):
            raise CommandError(f"{data}: no problem has two or more graded solutions")
        scorers: dict[str, rerank.Scorer] = {}
        prm = self._prm(options)
        if prm is not None:
            scorers.update(prm_scorers(prm))
        model = self._reward(options)
        if model is not None:
            if model.needs_prm and model.step_risk is None:  # a checkpoint file: its PRM is the one given here
                if prm is None:
                    raise CommandError("this reward model reads PRM scores: give --prm-checkpoint or --project")
                from ml.prm.reward_features import prm_step_risk

                model.step_risk = prm_step_risk(prm)
            scorers["reward"] = reward_scorer(model)
        result = rerank.best_of_n(
            groups,
            scorers,
            sizes=sizes,
            samples=options["samples"],
            seed=options["seed"],
            min_candidates=options["min_candidates"],
        )
        result["data"] = str(data)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
        table = rerank.markdown_table(result)
        out.with_suffix(".md").write_text(f"# Best-of-N on {data.name}\n\n{table}")
        rerank.plot(result, out.with_suffix(".png"), f"Best-of-N on {data.name}")
        self.stdout.write(table)
        self.stdout.write(f"Wrote {out.with_suffix('.md')}, .json and .png")

    def _prm(self, options):
        from ml.services.prm_lib import lib

        if options["prm_checkpoint"]:
            return lib.build_prm(lib.read_checkpoint(options["prm_checkpoint"]))
        if options["project"]:
            from ml.services import load_prm
            from ml.services.scoring import active_run

            project = Project.objects.filter(slug=options["project"]).first()
            run = active_run(project=project) if project else None
            if run is None:
                raise CommandError(f"--project {options['project']}: no such project or no active PRM")
            return load_prm(run=run)
        return None

    def _reward(self, options):
        from ml.prm.reward import load_reward_model

        if options["reward_checkpoint"]:
            return load_reward_model(options["reward_checkpoint"])
        if options["reward_project"]:
            from ml.services.config import artifact_abspath
            from ml.services.scoring import active_run

            project = Project.objects.filter(slug=options["reward_project"]).first()
            run = active_run(project=project) if project else None
            if run is None or (run.metrics or {}).get("model") != "bradley_terry":
                raise CommandError(f"--reward-project {options['reward_project']}: no such project or no reward model")
            from ml.services.reward import load_reward_model as load_with_prm

            return load_with_prm(artifact_abspath(run.artifact_path))
        return None
