"""Simulation results (ml.prm.active_sim JSON per data set) -> simulation.md + one PNG per data set.

`write_report(sim_dir, results_dir)` reads `<set>.json` (development split) and `<set>_vault.json`
(the untouched vault) and writes `simulation.md` with efficiency (bootstrap 95% CI over seeds) and
normalised AULC per set and strategy, the PNG curves, and `simulation_summary.json`. A hand-written
`simulation_notes.md` beside it, if present, is appended (protocol decisions, what did not work).
"""

from __future__ import annotations

import json
from pathlib import Path

from ml.prm.al_stats import mean_curve, summarize

ORDER = ["gsm8k", "math", "olympiadbench", "stepwise", "mrben"]


def fmt(v, nd=2):
    return "–" if v is None else f"{v:.{nd}f}"


def plot(name: str, res: dict, summ: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, metric, label in (
        (axes[0], "first_error_f1", "held-out first-error F1"),
        (axes[1], "auroc_negative", "held-out AUROC (-1 steps)"),
    ):
        for s, curves in res["per_seed"].items():
            x, y = mean_curve(curves, metric)
            ys = np.array([[p.get(metric) or 0 for p in c[: len(x)]] for c in curves])
            tag = s
            if metric == "first_error_f1":
                e = summ["strategies"][s]
                tag = f"{s} (x{fmt(e['efficiency'])}, CI {fmt(e['efficiency_ci'][0])}-{fmt(e['efficiency_ci'][1])})"
            ax.plot(x, y, marker="o", markersize=3, label=tag)
            ax.fill_between(x, y - ys.std(0) / len(ys) ** 0.5, y + ys.std(0) / len(ys) ** 0.5, alpha=0.12)
        if metric == "first_error_f1":
            ax.axhline(summ["strategies"]["random"]["final"], color="grey", lw=0.8, ls="--")
            if summ.get("floor") is not None:
                ax.axhline(summ["floor"], color="black", lw=0.8, ls=":", label="grade-only reader, no PRM")
        ax.set_xlabel("step labels")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    n_seeds = len(next(iter(res["per_seed"].values())))
    where = " (vault)" if res["meta"]["vault"] else ""
    fig.suptitle(f"{name}{where}: mean of {n_seeds} seeds, band = ±1 s.e.")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def table(files: list[Path], png_suffix: str, results: Path) -> tuple[list[str], dict]:
    rows = [
        "| data | strategy | step labels (final) | final F1 | efficiency vs random (95% CI) | nAULC F1 "
        "| nAULC − random (95% CI) | final AUROC(-1) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    all_summ = {}
    for f in files:
        res = json.loads(f.read_text())
        name = res["meta"]["data"]
        summ = summarize(res["per_seed"])
        auc = summarize(res["per_seed"], metric="auroc_negative")
        summ["floor"] = floor_mean(res["meta"])
        all_summ[name] = summ
        # one seed has no spread to resample: its "interval" was the estimate twice, (1.00–1.00)
        one_seed = len(next(iter(res["per_seed"].values()))) < 2
        for s, e in summ["strategies"].items():
            eff = fmt(e["efficiency"]) + "x" if e["efficiency"] is not None else "never"
            lo, hi = e["efficiency_ci"]
            alo, ahi = e["aulc_minus_random_ci"]
            gain = e["aulc"] - summ["strategies"]["random"]["aulc"]
            eff_ci = "(1 seed: no interval)" if one_seed else f"({fmt(lo)}–{fmt(hi)})"
            gain_ci = "(1 seed: no interval)" if one_seed else f"({alo:+.3f}–{ahi:+.3f})"
            rows.append(
                f"| {name} | {s} | {e['final_labels']:.0f} | {e['final']:.3f} | {eff} {eff_ci} "
                f"| {e['aulc']:.3f} | {gain:+.3f} {gain_ci} | {auc['strategies'][s]['final']:.3f} |"
            )
        plot(name, res, summ, results / f"simulation_{name}{png_suffix}.png")
    return rows, all_summ


def floor_mean(meta: dict) -> float | None:
    """Mean over seeds of the grade-only reader's held-out F1 (`ml.prm.floor`); None for runs
    written before it was recorded."""
    floor = meta.get("floor")
    return sum(f["first_error_f1"] for f in floor) / len(floor) if floor else None


def floor_table(summaries: dict[str, dict]) -> list[str]:
    """How far the PRM's curves stand above the grade-only reader, per set and split."""
    rows = [
        "| data | split | grade-only reader F1 (no PRM) | random final F1 | random nAULC | random nAULC − reader "
        "| best order | its nAULC − reader |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, summ in summaries.items():
        if summ.get("floor") is None:
            continue
        name, split = (key[: -len("_vault")], "vault") if key.endswith("_vault") else (key, "development")
        st = summ["strategies"]
        best = max(st, key=lambda s: st[s]["aulc"])
        rows.append(
            f"| {name} | {split} | {summ['floor']:.3f} | {st['random']['final']:.3f} | {st['random']['aulc']:.3f} "
            f"| {st['random']['aulc'] - summ['floor']:+.3f} | {best} | {st[best]['aulc'] - summ['floor']:+.3f} |"
        )
    return rows if len(rows) > 2 else []


def strategy_evidence(summary: dict, seeds: int) -> dict:
    """What the dashboard says about each strategy against random (frontend/src/dashboard/
    evidence.ts), from the report's summary: per strategy and split, the efficiency (None where
    random's final F1 was never reached) and nAULC minus random with its interval."""
    rows: dict[str, list[dict]] = {}
    for key, entry in summary.items():
        name, split = (key[: -len("_vault")], "vault") if key.endswith("_vault") else (key, "development")
        strategies = entry["strategies"]
        base = strategies["random"]["aulc"]
        for strategy, v in strategies.items():
            if strategy == "random":
                continue
            rows.setdefault(strategy, []).append(
                {
                    "set": name,
                    "split": split,
                    "efficiency": round(v["efficiency"], 2) if v["reached_random_final"] else None,
                    "aulc_diff": round(v["aulc"] - base, 3),
                    "aulc_diff_ci": [round(x, 3) for x in v["aulc_minus_random_ci"]],
                }
            )
    return {"seeds": seeds, "strategies": rows}


def write_report(sim_dir: Path, results: Path, *, tag: str = "", evidence: Path | None = None) -> str:
    """Write results/simulation.md (+ PNGs, summary JSON) from sim_dir/*.json; returns the markdown.
    `evidence`: also write `strategy_evidence` there (the dashboard's copy)."""
    sim_dir, results = Path(sim_dir), Path(results)
    results.mkdir(parents=True, exist_ok=True)
    # the summary this writes is JSON too, and may sit in the same folder: not a run
    runs = [p.stem for p in sim_dir.glob("*.json") if p.stem != "simulation_summary"]
    names = ORDER + sorted(n for n in runs if n not in ORDER and "_vault" not in n)
    dev = [sim_dir / f"{n}{tag}.json" for n in names if (sim_dir / f"{n}{tag}.json").exists()]
    vault = [sim_dir / f"{n}_vault{tag}.json" for n in names if (sim_dir / f"{n}_vault{tag}.json").exists()]
    out = [
        "# Active-learning simulation",
        "",
        "<!-- generated by manage.py simulate_active_learning (ml/prm/al_report.py) + simulation_notes.md -->",
        "",
        "Efficiency = step labels random needs to reach its own final held-out first-error F1 / step labels the",
        "strategy needs to reach that value (seed-averaged curves, linear interpolation; 'never' = not reached",
        "within the budget); 95% CI = bootstrap over seeds (a resample where it is never reached counts 0).",
        "nAULC = mean held-out first-error F1 over the label range all strategies share (a whole-curve measure).",
        "",
    ]
    summ: dict = {}
    if dev:
        rows, summ = table(dev, "", results)
        out += ["## Development split (per seed, 25% of the non-vault problems are the evaluation set)", ""] + rows
    if vault:
        vrows, vsumm = table(vault, "_vault", results)
        summ.update({f"{k}_vault": v for k, v in vsumm.items()})
        out += [
            "",
            "## Vault: 20% of problems by hash, untouched until the final run (pool = all other problems)",
            "",
        ] + vrows
    floors = floor_table(summ)
    if floors:
        out += [
            "",
            "## How much of the curves' height the PRM earns",
            "",
            "A reader with no PRM that knows each solution's graded answer and answers one constant per",
            'graded-answer stratum ("no error", or "first error at step k"), chosen for the F1 of every pool',
            "solution's truth as if the whole pool were labeled (`ml/prm/floor.py`), scored on the same",
            "evaluation solutions (mean of the seeds). Active learning can only speed up what the PRM learns",
            "above this line.",
            "",
        ] + floors
    if dev:
        meta = json.loads(dev[0].read_text())["meta"]
        keys = ("seeds", "rounds", "round_share", "seed_share", "control_share", "blocks", "decoding", "head")
        out += ["", f"Parameters: `{json.dumps({k: meta.get(k) for k in keys})}`"]
        out += [
            "",
            "Runs: "
            + "; ".join(
                f"{json.loads(p.read_text())['meta']['data']} {json.loads(p.read_text())['meta']['seconds']:.0f}s"
                for p in dev + vault
            ),
        ]
    notes = results / "simulation_notes.md"
    if notes.exists():
        out += ["", notes.read_text().strip()]
    text = "\n".join(out) + "\n"
    (results / "simulation.md").write_text(text)
    (results / "simulation_summary.json").write_text(json.dumps(summ, indent=1))
    if evidence is not None and dev:
        seeds = len(json.loads(dev[0].read_text())["meta"]["seeds"])
        evidence.write_text(json.dumps(strategy_evidence(summ, seeds), indent=1) + "\n")
    return text
