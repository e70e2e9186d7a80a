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
from ml.prm.examples import examples_from_record, path_first_error  # noqa: E402
from ml.prm.metrics import choose_threshold, first_error_f1, first_error_predictions  # noqa: E402
from ml.prm.sim_data import stepwise_records  # noqa: E402
from ml.prm.train import build_prm, train_prm  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SPLITS = ("gsm8k", "math", "olympiadbench")
# ProcessBench paper (arXiv:2412.06559), Table 3: average F1 over its four splits (GSM8K, MATH,
# OlympiadBench, Omni-MATH); the per-split values are in the paper.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="{}", help="PRMConfig overrides as JSON")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    cfg = PRMConfig(**{**{"num_threads": a.threads}, **json.loads(a.config)})
    t0 = time.perf_counter()
    examples = training_examples()
    rated = [e for e in examples if e.target is not None]
    ckpt = train_prm(rated, cfg, log=lambda s: print(s, flush=True))
    t_train = time.perf_counter() - t0
    prm = build_prm(ckpt)
    hazard, hazard_threshold = position_prior(rated)
    out = {"n_train_labels": len(rated), "train_seconds": round(t_train, 1), "config": cfg.to_dict()}
    for split in SPLITS:
        data = json.loads(dataset_paths(split)[0].read_text())
        truth = np.asarray([d["label"] for d in data])
        items = [(d["problem"], tuple(d["steps"][:i]), s) for d in data for i, s in enumerate(d["steps"])]
        t1 = time.perf_counter()
        pn = prm.score_steps(items).p_negative
        t_score = time.perf_counter() - t1
        seqs = np.split(pn, np.cumsum([len(d["steps"]) for d in data])[:-1])
        prm_f1 = first_error_f1(first_error_predictions(seqs, prm.threshold), truth)
        n = np.asarray([len(d["steps"]) for d in data])
        hz = [hazard[np.minimum(np.arange(k), len(hazard) - 1)] for k in n]
        # the PRM's ranking with the threshold chosen on this split itself: an oracle, shown as an upper bound
        oracle = max(
            (first_error_f1(first_error_predictions(seqs, t), truth)["first_error_f1"] or 0.0, t)
            for t in np.unique(np.quantile(pn, np.linspace(0.01, 0.999, 120)))
        )
        base = {
            "every step correct": first_error_f1(np.full(len(data), -1), truth),
            "first step wrong": first_error_f1(np.zeros(len(data), dtype=int), truth),
            "step-position prior (fitted on PRM800K)": first_error_f1(
                first_error_predictions(hz, hazard_threshold), truth
            ),
            "default PRM, threshold chosen on this split (oracle; not a fair score)": first_error_f1(
                first_error_predictions(seqs, oracle[1] - 1e-12), truth
            ),
        }
        out[split] = {
            "prm": prm_f1,
            "baselines": base,
            "score_seconds": round(t_score, 2),
            "steps": int(n.sum()),
        }
        print(split, prm_f1, {k: v["first_error_f1"] for k, v in base.items()}, flush=True)
    out["heldout_prm800k"] = ckpt["metrics"].get("heldout")
    out["threshold"] = ckpt["threshold"]
    (RESULTS / "processbench.json").write_text(json.dumps(out, indent=1, default=float))
    f = lambda m: f"{100 * (m['first_error_f1'] or 0):.1f}"  # noqa: E731
    lines = [
        "# ProcessBench first-error F1 of the default PRM trained on PRM800K stepwise",
        "",
        f"Generated by `bench/processbench_table.py` (config: `{json.dumps(json.loads(a.config))}`): "
        f"`PRMConfig()` defaults (hashed word/char n-grams + context, an ensemble of 4 small heads), trained on "
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
    ]
    (RESULTS / "processbench.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
