"""Train the app's default PRM on all of PRM800K stepwise and report ProcessBench first-error F1
beside trivial baselines and the published averages.

    .venv/bin/python bench/processbench_table.py
    .venv/bin/python bench/processbench_table.py --config \
        '{"featurizer": "local_hf", "hf_model_path": "/models/x", "device": "cuda"}'

The PRM is `PRMConfig()` (what a project trains by default) unless --config overrides it; with a
local Hugging Face model directory on a GPU the same command runs unchanged. Writes
bench/results/processbench.md and .json.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ml.prm.config import PRMConfig  # noqa: E402
from ml.prm.data import dataset_paths  # noqa: E402
from ml.prm.embeddings import EmbeddingStore, StoredEncoder  # noqa: E402
from ml.prm.examples import examples_from_record, path_first_error  # noqa: E402
from ml.prm.feature_rows import FeatureCache  # noqa: E402
from ml.prm.featurizers import make_featurizer  # noqa: E402
from ml.prm.metrics import (  # noqa: E402
    choose_threshold,
    first_error_f1,
    first_error_f1_interval,
    first_error_map,
    first_error_predictions,
    flag_share,
)
from ml.prm.sim_data import stepwise_records  # noqa: E402
from ml.prm.train import build_prm, train_prm  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SPLITS = ("gsm8k", "math", "olympiadbench")
# ProcessBench paper (arXiv:2412.06559), Table 3: average F1 over its four splits (GSM8K, MATH,
# OlympiadBench, Omni-MATH); the per-split values are in the paper.
PRIOR_ROW = "step-position prior (fitted on PRM800K)"
QUANTILE_ROW = "default PRM, label-free threshold: the training paths' best flag quantile of this split's own steps"
MAP_ROW = "default PRM, most probable first error, label-free cut: the training paths' best share of flagged solutions"
MAP_PRIOR_ROW = "step-position prior, most probable first error, label-free cut (the same decoding)"
MAP_ORACLE_ROW = "default PRM, most probable first error, cut chosen on this split (oracle; not a fair score)"
GRADED_PRM = "graded answer + default PRM's most probable first error"
GRADED_FIRST = "graded answer + first step wrong"
GRADED_PRIOR = "graded answer + step-position prior's most probable first error (fitted on PRM800K)"
GRADED_OTHERS = "graded answer + the commonest first error of the other two splits' wrong answers"
GRADED_ORACLE = "graded answer + the best single step on this split (oracle; not a fair score)"
PUBLISHED = {"Math-Shepherd-PRM-7B": 31.5, "Qwen2.5-Math-7B fine-tuned on PRM800K": 56.5}


def training_examples() -> list:
    import pandas as pd

    out = []
    for path in dataset_paths("stepwise"):
        for n, rec in enumerate(stepwise_records(pd.read_parquet(path))):
            out.extend(examples_from_record(rec, solution_id=f"{path.stem}:{n}"))
    return out


def position_prior(examples) -> tuple[np.ndarray, float]:
    """The step-position baseline, fitted on the PRM800K training labels like the PRM: the hazard
    P(step i is -1 | the steps before it are not) per position, and the hazard threshold that
    maximises first-error F1 on the training paths (flag the first step whose hazard exceeds it)."""
    by_pos: dict[int, list[int]] = {}
    for e in examples:
        if e.on_path and e.target is not None:
            by_pos.setdefault(e.step_index, []).append(int(e.target == -1))
    hazard = np.asarray([np.mean(by_pos.get(i, [0])) for i in range(max(by_pos) + 1)])
    paths = path_first_error(examples)
    seqs = [hazard[np.minimum(np.arange(len(p)), len(hazard) - 1)] for p, _ in paths.values()]
    truth = np.asarray([fe for _, fe in paths.values()])
    grid = np.unique(hazard) - 1e-12
    threshold = choose_threshold(seqs, truth, grid=grid)
    return hazard, threshold


def flag_quantile(seqs, truth) -> float:
    """The share of steps to flag, as a quantile of the steps' own P(-1), that maximises first-error
    F1 on the training paths. Applied to a new split's own (unlabeled) steps it moves the threshold
    with the split: a PRM's P(-1) runs higher on harder text (OlympiadBench) while its ranking
    still carries the signal, so a fixed P(-1) threshold flags nearly every solution there."""
    allp = np.concatenate(seqs)
    grid = np.linspace(0.5, 0.995, 100)

    def f1(q):
        return first_error_f1(first_error_predictions(seqs, np.quantile(allp, q)), truth)["first_error_f1"] or 0.0

    return float(max(grid, key=f1))


def map_share(seqs, truth) -> float:
    """The share of solutions to flag (by the most probable first error's margin) that maximises
    first-error F1 on the training paths; applied to a split as a quantile of its own margins."""
    index, margin = first_error_map(seqs)
    return float(
        max(
            np.linspace(0.05, 0.95, 91),
            key=lambda q: first_error_f1(flag_share(index, margin, q), truth)["first_error_f1"] or 0.0,
        )
    )


def read_graded(index: np.ndarray, grades: np.ndarray) -> np.ndarray:
    """A graded-right answer read as error-free and a graded-wrong one (which always holds an error)
    at `index`, as the app reads a graded solution (`forced_wrong`, simulation_notes.md session 17)."""
    return np.where(grades, -1, index)


def commonest_first_error(data: list[dict]) -> int:
    """The first-error step that most of these graded-wrong solutions share (a position-only reader)."""
    wrong = [d["label"] for d in data if not d["final_answer_correct"] and d["label"] >= 0]
    return int(np.bincount(wrong).argmax())


def graded_rows(prm_index, prior_index, grades, truth, others_step: int, data: list[dict]) -> dict:
    """First-error predictions with the graded answer: the PRM's and the trivial readers' (each
    gets the same grade, so only where a wrong answer's first error lies separates them)."""
    n = len(truth)
    return {
        GRADED_PRM: read_graded(prm_index, grades),
        GRADED_FIRST: read_graded(np.zeros(n, dtype=int), grades),
        GRADED_PRIOR: read_graded(prior_index, grades),
        GRADED_OTHERS: read_graded(np.full(n, others_step), grades),
        GRADED_ORACLE: read_graded(np.full(n, commonest_first_error(data)), grades),
    }


def f(m: dict) -> str:
    """A first-error F1 as the tables print it (x 100)."""
    return f"{100 * (m['first_error_f1'] or 0):.1f}"


def ci(c) -> str:
    return f"{100 * c[0]:.1f}-{100 * c[1]:.1f}"


def dci(c) -> str:
    """A paired difference's interval, signed."""
    return f"{100 * c[0]:+.1f} to {100 * c[1]:+.1f}"


def paired_diff_ci(pred_a, pred_b, truth, n_boot: int = 1000, seed: int = 0) -> list[float]:
    """95% bootstrap interval of F1(a) - F1(b), resampling solutions (the same draws for both)."""
    rng = np.random.default_rng(seed)
    diffs = []
    for d in rng.integers(0, len(truth), size=(n_boot, len(truth))):
        fa = first_error_f1(pred_a[d], truth[d])["first_error_f1"] or 0.0
        fb = first_error_f1(pred_b[d], truth[d])["first_error_f1"] or 0.0
        diffs.append(fa - fb)
    return [float(np.quantile(diffs, 0.025)), float(np.quantile(diffs, 0.975))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="{}", help="PRMConfig overrides as JSON")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--embeddings",
        default=str(ROOT / "bench" / "out" / "emb" / "minilm"),
        help="EmbeddingStore a MiniLM featurizer reads and fills (bench/embed_datasets.py)",
    )
    ap.add_argument("--out", default="processbench", help="results file stem under bench/results/")
    a = ap.parse_args()
    cfg = PRMConfig(**{**{"num_threads": a.threads}, **json.loads(a.config)})
    featurizer = make_featurizer(cfg)
    if hasattr(featurizer, "encoder"):  # embed each text once across runs
        featurizer.encoder = StoredEncoder(EmbeddingStore(a.embeddings), featurizer.encoder)
    t0 = time.perf_counter()
    examples = training_examples()
    rated = [e for e in examples if e.target is not None]
    ckpt = train_prm(rated, cfg, cache=FeatureCache(featurizer), log=lambda s: print(s, flush=True))
    t_train = time.perf_counter() - t0
    prm = build_prm(ckpt, featurizer=featurizer)
    hazard, hazard_threshold = position_prior(rated)
    train_paths = path_first_error(rated)
    pos = {id(e): i for i, e in enumerate(rated)}
    p_train = prm.score_steps([(e.problem, tuple(e.previous), e.step) for e in rated]).p_negative
    train_seqs = [p_train[[pos[id(e)] for e in path]] for path, _ in train_paths.values()]
    train_truth = np.asarray([fe for _, fe in train_paths.values()])
    quantile = flag_quantile(train_seqs, train_truth)
    share = map_share(train_seqs, train_truth)
    hazard_of = lambda lengths: [hazard[np.minimum(np.arange(k), len(hazard) - 1)] for k in lengths]  # noqa: E731
    prior_share = map_share(hazard_of([len(s) for s in train_seqs]), train_truth)
    out = {"n_train_labels": len(rated), "train_seconds": round(t_train, 1), "config": cfg.to_dict()}
    datas = {split: json.loads(dataset_paths(split)[0].read_text()) for split in SPLITS}
    for split in SPLITS:
        data = datas[split]
        truth = np.asarray([d["label"] for d in data])
        items = [(d["problem"], tuple(d["steps"][:i]), s) for d in data for i, s in enumerate(d["steps"])]
        t1 = time.perf_counter()
        pn = prm.score_steps(items).p_negative
        t_score = time.perf_counter() - t1
        seqs = np.split(pn, np.cumsum([len(d["steps"]) for d in data])[:-1])
        prm_pred = first_error_predictions(seqs, prm.threshold)
        prm_f1 = first_error_f1(prm_pred, truth)
        q_pred = first_error_predictions(seqs, float(np.quantile(pn, quantile)))
        n = np.asarray([len(d["steps"]) for d in data])
        hz = hazard_of(n)
        prior_pred = first_error_predictions(hz, hazard_threshold)
        # the PRM's ranking with the threshold chosen on this split itself: an oracle, shown as an upper bound
        oracle = max(
            (first_error_f1(first_error_predictions(seqs, t), truth)["first_error_f1"] or 0.0, t)
            for t in np.unique(np.quantile(pn, np.linspace(0.01, 0.999, 120)))
        )
        index, margin = first_error_map(seqs)
        map_pred = flag_share(index, margin, share)
        map_prior_pred = flag_share(*first_error_map(hz), prior_share)
        map_oracle = max(
            (first_error_f1(flag_share(index, margin, q), truth)["first_error_f1"] or 0.0)
            for q in np.linspace(0.05, 0.95, 91)
        )
        base = {
            "every step correct": first_error_f1(np.full(len(data), -1), truth),
            "first step wrong": first_error_f1(np.zeros(len(data), dtype=int), truth),
            PRIOR_ROW: first_error_f1(prior_pred, truth),
            QUANTILE_ROW: first_error_f1(q_pred, truth),
            "default PRM, threshold chosen on this split (oracle; not a fair score)": first_error_f1(
                first_error_predictions(seqs, oracle[1] - 1e-12), truth
            ),
            MAP_ROW: first_error_f1(map_pred, truth),
            MAP_PRIOR_ROW: first_error_f1(map_prior_pred, truth),
            MAP_ORACLE_ROW: {"first_error_f1": map_oracle},
        }
        prm_f1["ci"] = first_error_f1_interval(prm_pred, truth)
        for key, pred in (
            ("prior", prior_pred),
            ("quantile", q_pred),
            ("map", map_pred),
            ("map_prior", map_prior_pred),
        ):
            base_ci = first_error_f1_interval(pred, truth)
            prm_f1[f"{key}_ci"] = base_ci
        prm_f1["minus_prior_ci"] = paired_diff_ci(prm_pred, prior_pred, truth)
        prm_f1["quantile_minus_prior_ci"] = paired_diff_ci(q_pred, prior_pred, truth)
        prm_f1["map_minus_prior_ci"] = paired_diff_ci(map_pred, prior_pred, truth)
        prm_f1["map_minus_map_prior_ci"] = paired_diff_ci(map_pred, map_prior_pred, truth)
        others = commonest_first_error([d for s in SPLITS if s != split for d in datas[s]])
        grades = np.asarray([bool(d["final_answer_correct"]) for d in data])
        graded = graded_rows(index, first_error_map(hz)[0], grades, truth, others, data)
        wrong = ~grades
        out[split] = {
            "graded": {
                k: {
                    **first_error_f1(pred, truth),
                    "located_in_wrong": float(np.mean(pred[wrong] == truth[wrong])),
                    "ci": first_error_f1_interval(pred, truth),
                    "prm_minus_ci": None if k == GRADED_PRM else paired_diff_ci(graded[GRADED_PRM], pred, truth),
                }
                for k, pred in graded.items()
            },
            "others_step": others,
            "graded_right_with_error": int(np.sum(grades & (truth >= 0))),
            "prm": prm_f1,
            "baselines": base,
            "score_seconds": round(t_score, 2),
            "steps": int(n.sum()),
        }
        print(split, prm_f1, {k: v["first_error_f1"] for k, v in base.items()}, flush=True)
    out["heldout_prm800k"] = ckpt["metrics"].get("heldout")
    out["threshold"] = ckpt["threshold"]
    out["flag_quantile"] = quantile
    out["map_share"] = {"prm": share, "prior": prior_share}
    (RESULTS / f"{a.out}.json").write_text(json.dumps(out, indent=1, default=float))
    lines = [
        "# ProcessBench first-error F1 of the default PRM trained on PRM800K stepwise",
        "",
        f"Generated by `bench/processbench_table.py` (config: `{json.dumps(json.loads(a.config))}`): "
        f"`PRMConfig()` defaults{'' if a.config == '{}' else ' with the overrides above'} (hashed word/char n-grams "
        "+ context, an ensemble of 4 small heads), trained on "
        f"all {len(rated):,} rated PRM800K stepwise completions in {t_train:.0f} s on this 2-core machine; "
        f"first-error threshold P(-1) > {ckpt['threshold']:.2f} chosen on the training paths. F1 x 100.",
        "",
        "| model | gsm8k | math | olympiadbench | mean of the three |",
        "|---|---|---|---|---|",
    ]

    def mean(key):
        return np.mean([(out[s]["prm"] if key is None else out[s]["baselines"][key])["first_error_f1"] for s in SPLITS])

    cells = " | ".join(f(out[s]["prm"]) for s in SPLITS)
    lines.append(f"| **default PRM (this repo)** | {cells} | {100 * mean(None):.1f} |")
    for key in out[SPLITS[0]]["baselines"]:
        lines.append(f"| {key} | {' | '.join(f(out[s]['baselines'][key]) for s in SPLITS)} | {100 * mean(key):.1f} |")
    for name, avg in PUBLISHED.items():
        lines.append(f"| {name} (published, average over 4 splits incl. Omni-MATH) | | | | {avg:.1f} |")
    lines += [
        "",
        "Accuracy on erroneous / error-free solutions (PRM): "
        + "; ".join(
            f"{s} {100 * (out[s]['prm']['acc_erroneous'] or 0):.1f} / {100 * (out[s]['prm']['acc_correct'] or 0):.1f}"
            for s in SPLITS
        ),
        "",
        "95% bootstrap intervals (1,000 resamples of solutions), F1 x 100, and the paired difference to the",
        "step-position prior (the same resamples for both):",
        "",
        "| split | default PRM | PRM - prior | label-free threshold | label-free - prior | prior |",
        "|---|---|---|---|---|---|",
    ]
    for s in SPLITS:
        m = out[s]["prm"]
        lines.append(
            f"| {s} | {f(m)} ({ci(m['ci'])}) | {dci(m['minus_prior_ci'])} | "
            f"{f(out[s]['baselines'][QUANTILE_ROW])} ({ci(m['quantile_ci'])}) | {dci(m['quantile_minus_prior_ci'])} | "
            f"{f(out[s]['baselines'][PRIOR_ROW])} ({ci(m['prior_ci'])}) |"
        )
    lines += [
        "",
        "The most probable first error (the same PRM, decoded differently): step k is the first error with",
        "probability p_k x prod_{i<k}(1 - p_i), none with prod_i(1 - p_i); the solutions whose best first error",
        "beats 'none' by the widest margin are flagged, as many as the share that maximised F1 on the PRM800K",
        f"training paths ({100 * share:.0f}% for the PRM, {100 * prior_share:.0f}% for the prior). "
        "Paired 95% intervals:",
        "",
        "| split | most probable, PRM | PRM - prior (table's prior) | most probable, prior "
        "| PRM - prior, same decoding |",
        "|---|---|---|---|---|",
    ]
    for s in SPLITS:
        m = out[s]["prm"]
        lines.append(
            f"| {s} | {f(out[s]['baselines'][MAP_ROW])} ({ci(m['map_ci'])}) | {dci(m['map_minus_prior_ci'])} | "
            f"{f(out[s]['baselines'][MAP_PRIOR_ROW])} ({ci(m['map_prior_ci'])}) | {dci(m['map_minus_map_prior_ci'])} |"
        )
    lines += [
        "",
        f"The label-free threshold flags the top {100 * (1 - quantile):.0f}% of a split's own steps by P(-1) (the",
        "share that maximised F1 on the PRM800K training paths); it needs no labels of the split, only its steps.",
        "",
    ]
    lines += graded_section(out)
    (RESULTS / f"{a.out}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def graded_section(out: dict) -> list[str]:
    g = {s: out[s]["graded"] for s in SPLITS}
    lines = [
        "## With the graded answer (what the app knows of every imported solution)",
        "",
        "The app grades each imported solution's final answer against the problem's reference answer",
        "(ProcessBench records the grade as `final_answer_correct`). A graded-wrong answer always holds an",
        "error, so it is read at its most probable first error; a graded-right one is read as error-free (as",
        "the app reads a graded solution). Every reader below gets the same grade, so the rows differ only in",
        "where they put a wrong answer's first error. Graded-right solutions that hold an error ("
        + ", ".join(f"{s} {out[s]['graded_right_with_error']}" for s in SPLITS)
        + ") are missed by every row.",
        "These F1s read a grade the published PRMs' do not, so they are not comparable with the averages above.",
        "",
        "| reader | gsm8k | math | olympiadbench | mean of the three "
        "| first error found in wrong answers (gsm8k / math / olympiadbench) |",
        "|---|---|---|---|---|---|",
    ]
    for key in g[SPLITS[0]]:
        name = f"**{key}**" if key == GRADED_PRM else key
        mean = 100 * np.mean([g[s][key]["first_error_f1"] for s in SPLITS])
        located = " / ".join(f"{100 * g[s][key]['located_in_wrong']:.1f}%" for s in SPLITS)
        lines.append(f"| {name} | {' | '.join(f(g[s][key]) for s in SPLITS)} | {mean:.1f} | {located} |")
    steps = ", ".join(f"{s} step {out[s]['others_step'] + 1}" for s in SPLITS)
    lines += [
        "",
        f"The other two splits' commonest first error: {steps} (1-based). 95% bootstrap intervals of the",
        "PRM's F1 and paired intervals of the PRM's F1 minus each reader's (the same resamples for both), x 100:",
        "",
        "| split | PRM with the grade | - first step wrong | - position prior | - other splits' commonest step "
        "| - best step on this split (oracle) |",
        "|---|---|---|---|---|---|",
    ]
    for s in SPLITS:
        readers = (GRADED_FIRST, GRADED_PRIOR, GRADED_OTHERS, GRADED_ORACLE)
        diffs = " | ".join(dci(g[s][k]["prm_minus_ci"]) for k in readers)
        lines.append(f"| {s} | {f(g[s][GRADED_PRM])} ({ci(g[s][GRADED_PRM]['ci'])}) | {diffs} |")
    return lines + [""]


if __name__ == "__main__":
    main()
