"""Rebuild per-seed simulation curves from `simulate_active_learning` progress logs, for runs that
had to be stopped before writing their JSON (only complete seed curves are kept).

    .venv/bin/python bench/sim_from_logs.py --rounds 6 bench/out/p_gsm8k.log ... [--vault-logs ...]
"""

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

LINE = re.compile(
    r"^(?P<data>\S+) seed (?P<seed>\d+) (?P<strategy>\S+)\s+r\s*(?P<round>\d+) labels\s+(?P<labels>\d+) "
    r"F1 (?P<f1>[\d.]+) AUROC (?P<auroc>[\d.]+)"
)


def parse(paths, rounds: int) -> dict:
    runs: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for p in paths:
        for line in Path(p).read_text().splitlines():
            m = LINE.match(line.strip())
            if m:
                d = m.groupdict()
                runs[d["data"]][d["strategy"]][int(d["seed"])].append(
                    {
                        "labels": int(d["labels"]),
                        "first_error_f1": float(d["f1"]),
                        "auroc_negative": float(d["auroc"]),
                    }
                )
    out = {}
    for data, by_s in runs.items():
        complete = {s: {k: c for k, c in seeds.items() if len(c) == rounds + 1} for s, seeds in by_s.items()}
        # seeds every strategy finished (curves of one seed share the seed set and the split)
        common = sorted(set.intersection(*(set(v) for v in complete.values()))) if complete else []
        if not common:
            continue
        out[data] = {s: [complete[s][k] for k in common] for s in complete}, common
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--vault", action="store_true")
    ap.add_argument("--out-dir", default="bench/out/sim")
    ap.add_argument("--meta", default="{}", help="run parameters to record, as JSON")
    a = ap.parse_args()
    for data, (per_seed, seeds) in parse(a.logs, a.rounds).items():
        path = Path(a.out_dir) / f"{data}{'_vault' if a.vault else ''}.json"
        meta = {"data": data, "vault": a.vault, "seeds": seeds, "rounds": a.rounds, "from_logs": True, "seconds": 0}
        meta.update(json.loads(a.meta))
        path.write_text(json.dumps({"per_seed": per_seed, "meta": meta}))
        print(data, "seeds", seeds, "strategies", list(per_seed))


if __name__ == "__main__":
    main()
