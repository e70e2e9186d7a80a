"""`manage.py rerank_eval`: best-of-N accuracy by PRM product/min, reward model and majority vote
on a file of graded solutions, written as a table, JSON and a plot."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ml.prm.config import PRMConfig
from ml.prm.reward import RewardConfig, save_reward_checkpoint, train_reward_model
from ml.prm.synthetic import planted_examples
from ml.prm.train import save_checkpoint, train_prm
from tests.ml.reward_helpers import planted_pair_examples


def _file(tmp_path: Path) -> Path:
    """12 problems x 5 solutions: three give the right answer 7, two wrong answers that differ."""
    rng = random.Random(0)
    lines = []
    for p in range(12):
        for k, answer in enumerate(["7", "7", "7", "3", "9"]):
            lines.append(
                {
                    "problem": f"Problem {p}: what is 3 + 4?",
                    "steps": [f"Step by {k}: {rng.random():.3f}", f"# Answer\n\n{answer}"],
                    "correct": answer == "7",
                }
            )
    path = tmp_path / "graded.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_rerank_eval_reports_each_method_as_n_grows(tmp_path):
    prm = train_prm(planted_examples(400), PRMConfig(ensemble_size=2, max_epochs=3, step_hash_dim=2048))
    save_checkpoint(prm, tmp_path / "prm.pt")
    save_reward_checkpoint(
        train_reward_model(planted_pair_examples(60, seed=2), RewardConfig(max_epochs=5)), tmp_path / "rm.pt"
    )
    out = tmp_path / "results" / "rerank"
    call_command(
        "rerank_eval",
        "--data",
        str(_file(tmp_path)),
        "--prm-checkpoint",
        str(tmp_path / "prm.pt"),
        "--reward-checkpoint",
        str(tmp_path / "rm.pt"),
        "--sizes",
        "1,3,5",
        "--samples",
        "20",
        "--out",
        str(out),
    )
    result = json.loads(out.with_suffix(".json").read_text())
    accuracy = {name: {int(n): v for n, v in row.items()} for name, row in result["accuracy"].items()}
    assert set(accuracy) == {"random", "majority", "oracle", "prm_product", "prm_min", "reward"}
    assert result["problems"] == {"1": 12, "3": 12, "5": 12}
    # N=1: every method picks the only one, so all equal the share of right solutions (3/5) in expectation
    assert all(abs(row[1] - 0.6) < 0.1 for row in accuracy.values())
    # with all five, majority vote always finds the answer three of them give
    assert accuracy["majority"][5] == 1.0 and accuracy["random"][5] == pytest.approx(0.6)
    # the oracle (a right one among the N): certain from N=3 on, as only two of five are wrong
    assert accuracy["oracle"][3] == 1.0 and accuracy["oracle"][1] == pytest.approx(accuracy["random"][1])
    assert "| majority |" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_rerank_eval_refuses_a_file_without_several_solutions_per_problem(tmp_path):
    path = tmp_path / "single.jsonl"
    path.write_text(json.dumps({"problem": "p", "steps": ["s"], "correct": True}) + "\n")
    with pytest.raises(CommandError, match="two or more graded solutions"):
        call_command("rerank_eval", "--data", str(path), "--out", str(tmp_path / "r"))
    path.write_text(json.dumps({"problem": "p", "steps": ["s"]}) + "\n")
    with pytest.raises(CommandError, match="single.jsonl:1: needs problem, steps and correct"):
        call_command("rerank_eval", "--data", str(path), "--out", str(tmp_path / "r"))


def test_min_candidates_keeps_one_problem_set_for_every_n(tmp_path):
    path = _file(tmp_path)
    with path.open("a") as handle:  # a 13th problem with only two solutions
        for answer in ("7", "3"):
            handle.write(
                json.dumps({"problem": "Short one", "steps": [f"# Answer\n\n{answer}"], "correct": answer == "7"})
                + "\n"
            )
    for extra, expected in (
        ([], {"1": 13, "2": 13, "5": 12}),
        (["--min-candidates", "5"], {"1": 12, "2": 12, "5": 12}),
    ):
        out = tmp_path / f"r{len(extra)}"
        call_command(
            "rerank_eval", "--data", str(path), "--sizes", "1,2,5", "--samples", "5", "--out", str(out), *extra
        )
        assert json.loads(out.with_suffix(".json").read_text())["problems"] == expected


def test_a_size_no_problem_reaches_is_named_not_dropped_silently(tmp_path, capsys):
    """Was: `--sizes 1,2,8` on problems of 5 solutions printed N=1 and N=2 only, as if 8 were ignored."""
    out = tmp_path / "rerank"
    call_command("rerank_eval", "--data", str(_file(tmp_path)), "--sizes", "1,2,8", "--samples", "5", "--out", str(out))
    printed = capsys.readouterr().out
    assert "| N=1 | N=2 |" in printed
    assert "Not shown: N=8 (no problem has that many graded solutions)." in printed
    assert "Not shown: N=8" in out.with_suffix(".md").read_text()
