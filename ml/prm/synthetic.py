"""Generated step data with a planted pattern, for tests and benchmarks (no real labels needed).

Steps are ~150 characters of math-ish words. A negative step carries one of a few "error"
word bigrams (whose words also occur alone in good steps, so unigrams are not enough); a neutral
step carries a "stalling" bigram; a share of labels is flipped as noise.
"""

from __future__ import annotations

import numpy as np

from ml.prm.examples import StepExample, examples_from_steps

_WORDS = (
    "the we so then let of and is to by from with this that find solve equation value sum product "
    "term root square cube number integer prime factor divide multiply add subtract equal equals "
    "both sides gives get obtain therefore thus hence since because note recall given know need "
    "x y z n k a b c $x^2$ $2x+1$ $\\frac{1}{2}$ $\\sqrt{3}$ 1 2 3 4 5 6 7 8 9 10 12 15 20 24 36 "
    "angle triangle circle area radius side length base height parallel perpendicular"
).split()
ERROR_BIGRAMS = [("divide", "both"), ("square", "root"), ("add", "term"), ("multiply", "sides"), ("prime", "factor")]
NEUTRAL_BIGRAMS = [("let", "recall"), ("note", "know"), ("we", "need")]


def _step(rng: np.random.Generator, kind: int, n_words: int = 26) -> str:
    words = list(rng.choice(_WORDS, size=n_words))
    # good steps avoid the planted bigrams by construction
    if kind == -1:
        a, b = ERROR_BIGRAMS[rng.integers(len(ERROR_BIGRAMS))]
    elif kind == 0:
        a, b = NEUTRAL_BIGRAMS[rng.integers(len(NEUTRAL_BIGRAMS))]
    else:
        a = b = None
    if a is not None:
        j = int(rng.integers(0, n_words - 1))
        words[j : j + 2] = [a, b]
    text = " ".join(words)
    for x, y in ERROR_BIGRAMS + NEUTRAL_BIGRAMS:
        if (x, y) not in ((a, b),):
            text = text.replace(f"{x} {y}", f"{x} the {y}")
    return text[0].upper() + text[1:] + "."


def planted_solutions(
    n_solutions: int, *, seed: int = 0, min_steps: int = 3, max_steps: int = 10, p_error: float = 0.12
):
    """Solutions as (problem_id, problem, steps, first_error_index, answer_correct)."""
    rng = np.random.default_rng(seed)
    out = []
    for s in range(n_solutions):
        pid = f"p{s // 4}"  # four solutions per problem
        problem = f"Problem {pid}: " + " ".join(rng.choice(_WORDS, size=20))
        n = int(rng.integers(min_steps, max_steps + 1))
        fe = -1
        steps = []
        for i in range(n):
            kind = 1
            if fe < 0 and rng.random() < p_error:
                kind, fe = -1, i
            elif rng.random() < 0.1:
                kind = 0
            steps.append(_step(rng, kind))
        correct = fe < 0 if rng.random() > 0.1 else fe >= 0
        out.append((pid, problem, steps, fe, bool(correct)))
    return out


def planted_examples(n_steps: int, *, seed: int = 0, noise: float = 0.05) -> list[StepExample]:
    """About `n_steps` rated examples with -1 / 0 / +1 labels from the planted pattern (plus label noise)."""
    rng = np.random.default_rng(seed + 1)
    out: list[StepExample] = []
    s = 0
    while len(out) < n_steps:
        batch = planted_solutions(max(64, (n_steps - len(out)) // 5), seed=seed * 100_003 + s)
        s += 1
        for pid, problem, steps, _fe, _ok in batch:
            pid = f"{s}-{pid}"
            # every step is rated (phase-1 style) so neutral and negative both appear
            for i, st in enumerate(steps):
                kind = (
                    -1
                    if any(f"{a} {b}" in st.lower() for a, b in ERROR_BIGRAMS)
                    else (0 if any(f"{a} {b}" in st.lower() for a, b in NEUTRAL_BIGRAMS) else 1)
                )
                if rng.random() < noise:
                    kind = int(rng.choice([-1, 0, 1]))
                out.append(StepExample(problem, tuple(steps[:i]), st, kind, f"{pid}-{len(out)}", pid, i, True))
                if len(out) >= n_steps:
                    break
            if len(out) >= n_steps:
                break
    return out


def planted_oracle_examples(solutions) -> list[StepExample]:
    out = []
    for j, (pid, problem, steps, fe, _ok) in enumerate(solutions):
        out += examples_from_steps(problem, steps, fe, solution_id=f"s{j}", problem_id=pid)
    return out


def planted_pairs(n_pairs: int, *, seed: int = 0, n_steps: int = 4, noise: float = 0.1):
    """Pairs for a reward model as (problem, good_steps, bad_steps, annotator_prefers_good): two
    solutions of one problem, the bad one with a planted error step (ERROR_BIGRAMS), and an
    annotator who prefers the good one except for a `noise` share of flipped answers."""
    rng = np.random.default_rng(seed)
    out = []
    for p in range(n_pairs):
        problem = f"Problem q{p}: " + " ".join(rng.choice(_WORDS, size=20))
        good = [_step(rng, 1) for _ in range(n_steps)]
        bad = [_step(rng, 1) for _ in range(n_steps)]
        bad[int(rng.integers(0, n_steps))] = _step(rng, -1)
        out.append((problem, good, bad, bool(rng.random() >= noise)))
    return out
