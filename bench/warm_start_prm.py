"""The app's own PRM with and without a base checkpoint: held-out first-error F1 and AUROC(-1) after
training on N labeled solutions of a set, from scratch or fine-tuned from a base trained on PRM800K
stepwise (PRMConfig.base_checkpoint, L2 toward the base). Writes bench/results/warm_start_prm.md.

    .venv/bin/python bench/warm_start_prm.py [--sets gsm8k,math,olympiadbench,mrben] [--seeds 3]

Per seed, N solutions are drawn at random from the pool (their labels as an annotator gives them:
up to the first -1). Development: 25% of the non-vault problems are evaluated, the rest is the pool;
vault: the untouched 20% (ml.prm.active_sim.in_vault) is evaluated, every other problem is the pool.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ml.prm.active_sim import in_vault  # noqa: E402
from ml.prm.answer_input import GRADE_STRATA, answer_block_for_examples  # noqa: E402
from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.data import load_dataset  # noqa: E402
from ml.prm.examples import unlabeled_steps  # noqa: E402
from ml.prm.feature_rows import FeatureCache  # noqa: E402
from ml.prm.featurizers import make_featurizer  # noqa: E402
from ml.prm.floor import fit_floor, floor_f1  # noqa: E402
from ml.prm.metrics import auroc, first_error_f1, stratum_predictions  # noqa: E402
from ml.prm.reweight import ThresholdPool  # noqa: E402
from ml.prm.train import build_prm, save_checkpoint, train_prm  # noqa: E402

SIZES = (100, 300, 800)
POOL_SAMPLE = 2000  # as the app's `ml.services.population.SAMPLE_SOLUTIONS`
POOL_NOTE = (
    "Every run trains with the threshold pool the app reads (every step of a random sample of 2,000 pool "
    "solutions and of each labeled one; session 17)."
)


def threshold_pool(labeled, pool, cache: FeatureCache, rng: np.random.Generator, answers: bool) -> ThresholdPool:
    """What the app's trainer reads beside the labels (`ml.services.population.threshold_pool`): every
    step of a random sample of the pool and of each labeled solution, with the graded-answer columns
    for a PRM that reads them (`answers`)."""
    sample = [pool[i] for i in rng.permutation(len(pool))[:POOL_SAMPLE]]
    solutions = list({it.solution_id: it for it in [*labeled, *sample]}.values())
    steps = [
        e
        for it in solutions
        for e in unlabeled_steps(it.problem, it.steps, solution_id=it.solution_id, answer_correct=it.answer_correct)
    ]
    position = {it.solution_id: i for i, it in enumerate(solutions)}
    rows = cache.get(steps)
    return ThresholdPool(
        rows=rows.with_side(answer_block_for_examples(steps)) if answers else rows,
        lengths=np.asarray([len(it.steps) for it in solutions], dtype=np.int64),
        sample=np.asarray([position[it.solution_id] for it in sample], dtype=np.int64),
        labeled={it.solution_id: position[it.solution_id] for it in labeled},
        grades=np.asarray([GRADE_STRATA[it.answer_correct] for it in solutions]),
    )


def evaluate(prm, items) -> tuple[float, float]:
    """First-error F1 of the solutions (all their steps scored in one call) and AUROC(-1) of their
    labels; each step with its solution's graded answer, as the app scores an open solution."""
    steps = [e for it in items for e in unlabeled_steps(it.problem, it.steps, answer_correct=it.answer_correct)]
    seqs = np.split(prm.score_steps(steps).p_negative, np.cumsum([len(it.steps) for it in items])[:-1])
    # each solution's first error read with its graded-answer stratum's threshold, where the run chose them
    grades = [GRADE_STRATA[it.answer_correct] for it in items]
    pred = stratum_predictions(seqs, grades, prm.thresholds_by_grade, prm.threshold)
    f1 = first_error_f1(pred, np.array([it.first_error for it in items]))
    labeled = [e for it in items for e in it.labeled]
    p = prm.score_steps(labeled).p_negative
    return f1["first_error_f1"], auroc(np.array([e.target == -1 for e in labeled]), p)


def evaluation_and_pool(items, split: str, rng: np.random.Generator) -> tuple[list, list]:
    """(evaluated solutions, pool) for one seed: the vault and every other problem, or 25% of the
    non-vault problems (drawn with `rng`) and the rest of them."""
    if split == "vault":
        return [it for it in items if in_vault(it.problem_id)], [it for it in items if not in_vault(it.problem_id)]
    dev = [it for it in items if not in_vault(it.problem_id)]
    problems = sorted({it.problem_id for it in dev})
    rng.shuffle(problems)
    held = set(problems[: len(problems) // 4])
    return [it for it in dev if it.problem_id in held], [it for it in dev if it.problem_id not in held]


GRADE_ONLY = "grade only"


def grade_only(chosen, ev) -> float:
    """Held-out F1 of the reader with no PRM (`ml.prm.floor`), fitted on the labeled solutions."""

    def columns(items):
        return [GRADE_STRATA[it.answer_correct] for it in items], [len(it.steps) for it in items]

    rule = fit_floor(*columns(chosen), [it.first_error for it in chosen])
    return floor_f1(*columns(ev), [it.first_error for it in ev], rule)


def run_set(
    name: str,
    seeds: int,
    cache: FeatureCache,
    split: str,
    arms: dict[str, Callable[[int], PRMConfig]],
    *,
    floor: bool = False,
) -> dict:
    """(N, arm) -> per seed (F1, AUROC): each arm's PRMConfig for a seed, trained on the same N solutions
    with the same threshold pool, as the app trains (`threshold_pool`); with `floor`, also (N,
    GRADE_ONLY) -> per seed (F1 of the grade-only reader, nan)."""
    items = load_dataset(name)
    out: dict = {}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        ev, pool = evaluation_and_pool(items, split, rng)
        order = rng.permutation(len(pool))
        for n in SIZES:
            if n > len(pool):
                continue
            chosen = [pool[i] for i in order[:n]]
            examples = [e for it in chosen for e in it.labeled]
            if floor:
                out.setdefault((n, GRADE_ONLY), []).append((grade_only(chosen, ev), float("nan")))
            pools: dict[bool, ThresholdPool] = {}  # one per kind of head input, shared by the arms
            for arm, config in arms.items():
                cfg = config(seed)
                if cfg.answer_input not in pools:
                    rng_pool = np.random.default_rng([seed, n])
                    pools[cfg.answer_input] = threshold_pool(chosen, pool, cache, rng_pool, cfg.answer_input)
                ckpt = train_prm(examples, cfg, cache=cache, threshold_pool=pools[cfg.answer_input])
                out.setdefault((n, arm), []).append(evaluate(build_prm(ckpt, cache=cache), ev))
    return out


def compare_arms(
    sets: list[str], seeds: int, cache: FeatureCache, arms: dict[str, Callable[[int], PRMConfig]]
) -> list[str]:
    """Table rows, development split then vault: per set and N, F1 of both arms, the difference
    (mean, and its smallest and largest over seeds) and both AUROC(-1)."""
    first, second = arms
    rows = []
    for split in ("dev", "vault"):
        for name in sets:
            rows += arm_rows(split, name, run_set(name, seeds, cache, split, arms), first, second)
    return rows


def arm_rows(split: str, name: str, res: dict, first: str, second: str) -> list[str]:
    """One set's rows of `write_table` from `run_set` results holding both arms, printed as they come."""
    rows = []
    for n in SIZES:
        if (n, first) not in res:
            continue
        a, b = np.array(res[(n, first)], float), np.array(res[(n, second)], float)
        diff = b[:, 0] - a[:, 0]
        rows.append(
            f"| {split} | {name} | {n} | {a[:, 0].mean():.3f} | {b[:, 0].mean():.3f} | "
            f"{diff.mean():+.3f} ({diff.min():+.3f} to {diff.max():+.3f}) | {a[:, 1].mean():.3f} | "
            f"{b[:, 1].mean():.3f} |"
        )
        print(rows[-1], flush=True)
    return rows


def write_table(path: Path, title: str, intro: str, columns: tuple[str, str], rows: list[str]) -> None:
    first, second = columns
    md = [
        f"# {title}",
        "",
        intro,
        "",
        f"| split | set | N | F1 {first} | F1 {second} | difference (range over seeds) "
        f"| AUROC {first} | AUROC {second} |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
    ]
    path.write_text("\n".join(md))
    print("\n".join(md))


def parse_args() -> tuple[list[str], int]:
    """(sets, seeds) from the command line; both benches of two PRM configs take the same two."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="gsm8k,math,olympiadbench,mrben")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    return [s.strip() for s in args.sets.split(",") if s.strip()], args.seeds


def main() -> None:
    sets, seeds = parse_args()
    t0 = time.perf_counter()
    cache = FeatureCache(make_featurizer(PRMConfig()))
    base_items = load_dataset("stepwise")
    base_examples = [e for it in base_items for e in it.labeled]
    base_ckpt = train_prm(base_examples, PRMConfig(), cache=cache)
    with tempfile.TemporaryDirectory() as tmp:
        base = save_checkpoint(base_ckpt, Path(tmp) / "base.pt")
        arms = {
            "scratch": lambda seed: PRMConfig(seed=seed),
            "base": lambda seed: PRMConfig(seed=seed, base_checkpoint=base),
        }
        rows = compare_arms(sets, seeds, cache, arms)
    write_table(
        ROOT / "bench" / "results" / "warm_start_prm.md",
        "The app's PRM from scratch vs fine-tuned from a PRM800K base (bench/warm_start_prm.py)",
        f"Base: `PRMConfig()` trained on {len(base_examples):,} PRM800K stepwise step labels "
        f"({len(base_items):,} solutions, as annotators give them); projects' runs use it through "
        f"`base_checkpoint` with L2 toward it (`base_l2` = {PRMConfig().base_l2}, chosen on math's development split "
        "among 0.01 and 0.1; plain fine-tuning, L2 toward zero, was also tried there). Held-out first-error "
        f"F1 and AUROC(-1), mean of {seeds} seeds; N = labeled solutions drawn at random from the pool "
        f"(sets with fewer solutions stop earlier). {POOL_NOTE} Took "
        f"{time.perf_counter() - t0:.0f} s on this 2-core machine.",
        ("scratch", "with base"),
        rows,
    )


if __name__ == "__main__":
    main()
