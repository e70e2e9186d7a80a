"""The app's PRM with one PRMConfig switch off and on (the default): held-out first-error F1 and
AUROC(-1) after training on N labeled solutions drawn at random, on the sets whose answers are
graded (ProcessBench gsm8k, math, olympiadbench; MR-Ben). Writes bench/results/<switch>_prm.md.

    .venv/bin/python bench/config_switch_prm.py SWITCH [--sets gsm8k,math,olympiadbench,mrben] [--seeds 3]

SWITCH is one of the keys of SWITCHES below. Splits as bench/warm_start_prm.py: development (25% of
the non-vault problems evaluated) and the vault (ml.prm.active_sim.in_vault). Each default was
chosen on the simulation's development split (bench/results/simulation_notes.md, the session named
in its row) before this ran. Where the switch only changes how step P(-1) are read into a first
error, the model is the same in both arms (same seed, same labels) and so is AUROC(-1).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from warm_start_prm import POOL_NOTE, compare_arms, parse_args, write_table  # noqa: E402

from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.feature_rows import FeatureCache  # noqa: E402
from ml.prm.featurizers import make_featurizer  # noqa: E402

# switch -> (the two arms' names, the table's title, what the switch does, a note on how it ran)
SWITCHES = {
    "answer_input": (
        ("without", "with"),
        "The app's PRM without and with the graded answer as an input",
        "the solution's graded final answer as four side columns of the head (`ml/prm/answer_input.py`).",
        "",
    ),
    "grade_thresholds": (
        ("one", "per grade"),
        "The app's PRM with one first-error threshold and with one per graded answer",
        "the first-error threshold chosen once for all training solutions, or once per graded-answer "
        "stratum (wrong, right, ungraded) jointly (`ml/prm/metrics.py` `choose_stratum_thresholds`).",
        " Both arms choose on the training solutions scored out of bag (session 16; before, in-sample "
        "scores set the threshold: this bench at commit 31435b7 measures that trainer).",
    ),
    "forced_wrong": (
        ("threshold", "most probable"),
        "The app's PRM reading a graded-wrong answer over a threshold and at its most probable first error",
        "a graded-wrong solution's first error is the first step over its stratum's threshold, or its "
        "most probable first error read on its whole chain (`ml/prm/metrics.py` `first_error_map`); the "
        "right and ungraded strata keep their thresholds, chosen jointly.",
        "",
    ),
}


def config_switch_bench(
    *, switch: str, arm_names: tuple[str, str], out: str, title: str, what: str, note: str = ""
) -> None:
    """A bench of `PRMConfig()` with one boolean setting off and on (the default), on the sets and
    seeds of the command line, written to bench/results/`out`: `what` says what the setting does,
    `note` anything more about how the arms were run."""
    sets, seeds = parse_args()
    t0 = time.perf_counter()
    cache = FeatureCache(make_featurizer(PRMConfig()))
    off, on = arm_names
    arms = {
        off: lambda seed: PRMConfig(seed=seed, **{switch: False}),
        on: lambda seed: PRMConfig(seed=seed, **{switch: True}),
    }
    rows = compare_arms(sets, seeds, cache, arms)
    write_table(
        ROOT / "bench" / "results" / out,
        title,
        f"`PRMConfig()` with `{switch}` off and on (the default): {what} Held-out first-error F1 and AUROC(-1), "
        f"mean of {seeds} seeds (difference: mean, and the smallest and largest over seeds); N = labeled "
        "solutions drawn at random from the pool, labels as an annotator gives them (up to the first -1). "
        "Evaluated solutions are scored with their graded answers, as the app scores an open solution. "
        f"{POOL_NOTE}{note} Took {time.perf_counter() - t0:.0f} s on this 2-core machine.",
        arm_names,
        rows,
    )


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in SWITCHES:
        sys.exit(f"usage: {sys.argv[0]} SWITCH [--sets ...] [--seeds N]; SWITCH is one of {', '.join(SWITCHES)}")
    switch = sys.argv.pop(1)
    arms, title, what, note = SWITCHES[switch]
    config_switch_bench(
        switch=switch,
        arm_names=arms,
        out=f"{switch}_prm.md",
        title=f"{title} (bench/config_switch_prm.py {switch})",
        what=what,
        note=note,
    )
