"""Step examples from PRM800K records (hand-checked) and from first-error oracle labels."""

import json

import pytest

from ml.prm.data import DATA
from ml.prm.examples import examples_from_record, examples_from_steps, path_first_error, step_key


def _c(text, rating, flagged=False):
    return {"text": text, "rating": rating, "flagged": flagged}


HAND_RECORD = {
    "labeler": "L",
    "timestamp": "2022-01-01T00:00:00",
    "generation": None,
    "question": {"problem": "P?", "ground_truth_answer": "4"},
    "label": {
        "steps": [
            {"completions": [_c("a", 1)], "human_completion": None, "chosen_completion": 0},
            {
                "completions": [_c("b1", -1), _c("b2", 0), _c("b3", None)],
                "human_completion": None,
                "chosen_completion": 1,
            },
            {
                "completions": [_c("c1", -1), _c("c2", -1)],
                "human_completion": {"text": "H", "rating": None, "source": "human", "flagged": False},
                "chosen_completion": None,
            },
            {"completions": [_c("d", 1)], "human_completion": None, "chosen_completion": 0},
            {"completions": [_c("e1", -1), _c("e2", 1)], "human_completion": None, "chosen_completion": None},
        ],
        "total_time": 1,
        "finish_reason": "found_error",
    },
}


def test_hand_made_record_every_rated_completion_with_main_line_context():
    ex = examples_from_record(HAND_RECORD)
    assert [(e.step, e.target) for e in ex] == [
        ("a", 1),
        ("b1", -1),
        ("b2", 0),  # b3 has a null rating: skipped
        ("c1", -1),
        ("c2", -1),  # the human completion is unrated: no example
        ("d", 1),
        ("e1", -1),
        ("e2", 1),
    ]
    by_step = {e.step: e for e in ex}
    assert by_step["a"].previous == ()
    assert by_step["b1"].previous == ("a",)
    assert by_step["c2"].previous == ("a", "b2")  # chosen completion of step 1
    assert by_step["d"].previous == ("a", "b2", "H")  # human completion replaces the null choice
    assert by_step["e1"].previous == ("a", "b2", "H", "d")
    assert all(e.problem == "P?" for e in ex)
    assert [e.step_index for e in ex] == [0, 1, 1, 2, 2, 3, 4, 4]
    # the solution's own path: a, b2 (chosen), c1 (first completion where none was chosen), then it ends
    assert [e.step for e in ex if e.on_path] == ["a", "b2", "c1"]
    ((path, fe),) = path_first_error(ex).values()
    assert [e.step for e in path] == ["a", "b2", "c1"] and fe == 2


def test_examples_from_steps_oracle():
    steps = ["s0", "s1", "s2", "s3"]
    ex = examples_from_steps("P", steps, 2)
    assert [(e.step, e.target, e.previous) for e in ex] == [("s0", 1, ()), ("s1", 1, ("s0",)), ("s2", -1, ("s0", "s1"))]
    assert [e.target for e in examples_from_steps("P", steps, -1)] == [1, 1, 1, 1]
    with pytest.raises(ValueError):
        examples_from_steps("P", steps, 4)
    assert ex[1].key == step_key("P", ("s0",), "s1") != step_key("P", (), "s1")


def _line(name, n):
    path = DATA / "prm800k" / name
    if not path.exists():
        pytest.skip(f"{path} absent")
    return json.loads(path.read_text().splitlines()[n])


def test_real_phase1_record_hand_checked():
    # openr sample line 1 ("Three pencils and a jumbo eraser..."): step 1 has five -1 completions and an
    # unrated human completion that continues the solution; the last step rates 5 alternatives.
    rec = _line("openr_samples_prm800k.jsonl", 0)
    steps = rec["label"]["steps"]
    ex = examples_from_record(rec)
    assert len(ex) == 1 + 5 + 1 + 1 + 1 + 5 == 14
    assert [e.target for e in ex] == [1, -1, -1, -1, -1, -1, 1, 1, 1, 0, 1, 1, 1, 1]
    human = steps[1]["human_completion"]["text"]
    assert human == "We have $3p+e=1.24$ and $5p+e=1.82$."
    third = ex[6]
    assert third.step == steps[2]["completions"][0]["text"]
    assert third.previous == (steps[0]["completions"][0]["text"], human)
    assert third.problem == rec["question"]["problem"]
    last = [e for e in ex if e.step_index == 5]
    assert [e.target for e in last] == [0, 1, 1, 1, 1]
    assert all(len(e.previous) == 5 for e in last)
    ((path, fe),) = path_first_error(ex).values()
    assert fe == 1 and len(path) == 2  # the model's own step 1 was wrong; the human rewrote it


def test_real_phase2_record_hand_checked():
    # phase-2 train line 1: nine +1 pre-generated steps, then the labeler found an error at step 10
    # and rated four alternatives -1 and one 0 (no chosen completion).
    rec = _line("phase2_train.reconstructed.jsonl", 0)
    ex = examples_from_record(rec)
    assert len(ex) == 9 + 5
    assert [e.target for e in ex] == [1] * 9 + [-1, -1, -1, -1, 0]
    pre = rec["question"]["pre_generated_steps"]
    assert ex[9].step == pre[9] and ex[9].previous == tuple(pre[:9])
    ((path, fe),) = path_first_error(ex).values()
    assert fe == 9 and [e.step for e in path] == pre[:10]
