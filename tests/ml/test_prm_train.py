"""The training loop learns a planted pattern; checkpoints round-trip exactly and are written atomically."""

import os

import numpy as np
import pytest
import torch

from ml.prm.config import PRMConfig
from ml.prm.feature_rows import FeatureCache
from ml.prm.featurizers import HashedNgramFeaturizer
from ml.prm.synthetic import planted_examples, planted_oracle_examples, planted_solutions
from ml.prm.train import load_checkpoint, read_checkpoint, save_checkpoint, split_by_problem, train_prm


@pytest.fixture(scope="module")
def planted():
    # 2% label noise: noisy "negatives" cap the reachable AUROC (5% noise caps it near 0.88)
    examples = planted_examples(5000, seed=3, noise=0.02)
    cache = FeatureCache(HashedNgramFeaturizer())
    ckpt = train_prm(examples, PRMConfig(seed=1, ensemble_size=2, max_epochs=12), cache=cache)
    return examples, cache, ckpt


def test_learns_planted_pattern_on_heldout_problems(planted):
    examples, _cache, ckpt = planted
    held = ckpt["metrics"]["heldout"]
    assert held["n_steps"] > 500 and held["n_negative"] > 50
    assert held["auroc_negative"] > 0.85, held
    assert held["accuracy"] > 0.8
    assert held["first_error_f1"] > 0.6
    assert held["ece"] < 0.1
    # The run stores the intervals the dashboard shows next to the held-out scores.
    lo, hi = held["accuracy_ci"]
    assert lo < held["accuracy"] < hi and hi - lo < 0.1  # > 500 held-out steps: a narrow interval
    lo, hi = held["first_error_f1_ci"]
    assert lo <= held["first_error_f1"] <= hi and held["n_solutions"] > 0
    assert ckpt["label_count"] == len(examples) == ckpt["n_train"] + ckpt["n_heldout"]
    assert ckpt["best_epoch"] >= 0 and ckpt["history"]


def test_split_is_by_problem():
    examples = planted_examples(2000, seed=5)
    tr, he = split_by_problem(examples, 0.2, seed=0)
    assert len(tr) + len(he) == len(examples) and he
    assert not {examples[i].problem_id for i in tr} & {examples[i].problem_id for i in he}


def test_checkpoint_round_trip_identical_predictions(planted, tmp_path):
    examples, cache, ckpt = planted
    path = tmp_path / "models" / "prm.pt"
    save_checkpoint(ckpt, path)
    assert os.listdir(path.parent) == ["prm.pt"]  # no temp file left behind
    prm = load_checkpoint(path)
    from ml.prm.train import build_prm

    same = build_prm(ckpt, cache=cache)
    probe = examples[:300]
    a = prm.score_steps(probe)
    b = same.score_steps(probe)
    assert np.array_equal(a.probs, b.probs)
    assert np.array_equal(a.disagreement, b.disagreement)
    assert prm.threshold == ckpt["threshold"] and prm.temperature == ckpt["temperature"]
    # the file is a plain dict of tensors and primitives: loads with weights_only=True
    assert read_checkpoint(path)["metrics"] == ckpt["metrics"]
    # atomic overwrite keeps a single file
    save_checkpoint({**ckpt, "label_count": 1}, path)
    assert torch.load(path, weights_only=True)["label_count"] == 1 and os.listdir(path.parent) == ["prm.pt"]


def test_scores_and_uncertainty_shapes(planted):
    _examples, cache, ckpt = planted
    from ml.prm.train import build_prm

    prm = build_prm(ckpt, cache=cache)
    sols = [s for s in planted_solutions(200, seed=9) if s[3] >= 1]
    hits = 0
    for _pid, problem, steps, fe, _ok in sols:
        p_neg = prm.score_steps([(problem, tuple(steps[:i]), st) for i, st in enumerate(steps)]).p_negative
        hits += int(np.argmax(p_neg)) == fe
    # the planted error step is usually the most suspicious step of its solution
    assert hits / len(sols) > 0.6, (hits, len(sols))
    _pid, problem, steps, fe, _ok = sols[0]
    out = prm.score_solution(problem, steps)
    assert len(out["steps"]) == len(steps)
    for s in out["steps"]:
        assert s["p_negative"] + s["p_neutral"] + s["p_positive"] == pytest.approx(1.0, abs=1e-5)
    p_not_neg = [1 - s["p_negative"] for s in out["steps"]]
    assert out["score_product"] == pytest.approx(float(np.prod(p_not_neg)), rel=1e-5)
    assert out["score_min"] == pytest.approx(min(p_not_neg), rel=1e-5)
    sc = prm.score_steps([(problem, tuple(steps[:i]), st) for i, st in enumerate(steps)])
    assert (sc.entropy >= 0).all() and (sc.disagreement >= 0).all() and ((sc.margin >= 0) & (sc.margin <= 1)).all()


def test_oracle_examples_without_neutral_and_tiny_sets_train():
    sols = planted_solutions(40, seed=2)
    ex = planted_oracle_examples(sols)
    ckpt = train_prm(ex, PRMConfig(max_epochs=3, ensemble_size=2))
    assert ckpt["label_counts"]["0"] == 0 and ckpt["n_heldout"] > 0
    # fewer than 4 problems: no held-out split, still a usable model
    ckpt = train_prm(ex[:6], PRMConfig(max_epochs=2, ensemble_size=1))
    assert ckpt["n_heldout"] == 0 and "heldout" not in ckpt["metrics"]
    with pytest.raises(ValueError):
        train_prm([], PRMConfig())


def test_training_feed_gives_the_same_logits_and_gradients_as_the_scoring_feed(planted):
    """Training feeds sparse rows as CSR with its transpose (a fast backward); scoring feeds them to
    EmbeddingBag. Both must be the same function with the same gradient."""
    from ml.prm.model import EnsembleHead

    examples, cache, _ckpt = planted
    rows = cache.get(examples[:300])
    batch = np.arange(7, 300, 3)
    torch.manual_seed(0)
    head = EnsembleHead(rows.dim, hidden=8, k=2, sparse=True, dropout=0.0)
    grads, outs = [], []
    for inputs in (rows.take(batch).torch_inputs(), rows.training_inputs(batch)):
        head.zero_grad(set_to_none=True)
        out = head(**inputs)
        (out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum().backward()
        outs.append(out.detach())
        grads.append(head.first.weight.grad.to_dense())
    assert torch.allclose(outs[0], outs[1], atol=1e-5)
    assert grads[0].abs().sum() > 0 and torch.allclose(grads[0], grads[1], atol=1e-5)


def test_fixed_training_batches_cover_every_row_once_an_epoch_and_feed_what_a_gather_feeds(planted):
    """A run cuts its (once shuffled) rows into fixed batches; each epoch visits all of them in a
    new order, and a batch, kept transpose or not, is the same input as the row gather of it."""
    from ml.prm.feature_rows import TrainingBatches

    examples, cache, _ckpt = planted
    rows = cache.get(examples[:300])
    kept, rebuilt = TrainingBatches(rows, 64), TrainingBatches(rows, 64, keep_bytes=0)
    gen = torch.Generator().manual_seed(0)
    first, second = kept.order(gen), kept.order(gen)
    assert sorted(first) == sorted(second) == list(range(5)) and first != second
    assert [b - a for a, b in kept.bounds] == [64, 64, 64, 64, 44]
    for j in first + first:  # the second pass reads the kept transposes
        a, b = kept.bounds[j]
        gathered = rows.training_inputs(np.arange(a, b))
        for batches in (kept, rebuilt):
            inputs = batches.inputs(j)
            for name in ("csr", "csr_t"):
                assert torch.equal(inputs[name].to_dense(), gathered[name].to_dense()), name
    assert len(kept._transposes) == 5 and not rebuilt._transposes


def test_a_base_checkpoint_warm_starts_training_and_a_mismatched_one_is_refused(tmp_path):
    """Fine-tuning from a base trained on other labels of the same pattern beats training from
    scratch on a few labels; the base itself is the first early-stopping candidate."""
    from ml.prm.config import ConfigError

    small = dict(step_hash_dim=2048, context_hash_dim=512, ensemble_size=2, hidden_size=8, max_epochs=8)
    base = train_prm(planted_examples(4000, seed=21, noise=0.02), PRMConfig(seed=1, **small))
    path = save_checkpoint(base, tmp_path / "base.pt")
    few = planted_examples(160, seed=5, noise=0.02)
    cold = train_prm(few, PRMConfig(seed=2, **small))
    warm = train_prm(few, PRMConfig(seed=2, base_checkpoint=path, **small))
    assert warm["base"] == {"path": path, "label_count": base["label_count"]} and cold["base"] is None
    assert warm["history"][0]["epoch"] == -1  # the base was evaluated before any fine-tuning
    auroc = lambda c: c["metrics"]["heldout"]["auroc_negative"]  # noqa: E731
    assert auroc(warm) > max(auroc(cold) + 0.05, 0.85), (auroc(warm), auroc(cold))

    with pytest.raises(ConfigError, match="base_checkpoint: trained with another featurizer, hidden_size"):
        train_prm(few, PRMConfig(seed=2, base_checkpoint=path, **{**small, "step_hash_dim": 4096, "hidden_size": 4}))
    with pytest.raises(ConfigError, match="base_checkpoint: no such file"):
        train_prm(few, PRMConfig(base_checkpoint=str(tmp_path / "none.pt"), **small))


def _graded_examples(n_solutions: int, seed: int):
    """Solutions whose step texts carry no error signal: a graded-wrong answer's last step is its
    first error, a graded-right one has none. Only the grade can tell them apart."""
    from ml.prm.examples import examples_from_steps

    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(300)]
    out = []
    for n in range(n_solutions):
        steps = [" ".join(rng.choice(words, 8)) for _ in range(4)]
        wrong = bool(n % 2)
        out += examples_from_steps(
            f"problem {n % 120}",
            steps,
            3 if wrong else -1,
            solution_id=f"s{n}",
            problem_id=f"p{n % 120}",
            answer_correct=not wrong,
        )
    return out


def test_the_graded_answer_is_a_head_input():
    examples = _graded_examples(800, seed=2)
    cfg = dict(seed=0, ensemble_size=2, hidden_size=8, step_hash_dim=2048, context_hash_dim=512, max_epochs=15)
    featurizer = HashedNgramFeaturizer(step_hash_dim=2048, context_hash_dim=512)
    graded = train_prm(examples, PRMConfig(**cfg), cache=FeatureCache(featurizer))
    blind = train_prm(examples, PRMConfig(**cfg, answer_input=False), cache=FeatureCache(featurizer))
    assert graded["side_dim"] == 4 and blind["side_dim"] == 0
    g, b = graded["metrics"]["heldout"], blind["metrics"]["heldout"]
    # position alone finds *where* an error would be (the last step); only the grade says whether
    assert g["auroc_negative"] > b["auroc_negative"] and g["auroc_negative"] > 0.95, g
    assert g["first_error_f1"] > 0.9 and b["first_error_f1"] < 0.75, (g, b)

    from dataclasses import replace

    from ml.prm.train import build_prm

    prm = build_prm(graded, featurizer=featurizer)
    last = [e for e in examples if e.step_index == 3][:50]
    as_wrong = prm.score_steps([replace(e, answer_correct=False) for e in last]).p_negative
    as_right = prm.score_steps([replace(e, answer_correct=True) for e in last]).p_negative
    ungraded = prm.score_steps([(e.problem, e.previous, e.step) for e in last]).p_negative
    assert (as_wrong > as_right).all()
    assert as_right.mean() < ungraded.mean() < as_wrong.mean()


def test_a_checkpoint_from_before_the_answer_input_loads(planted):
    examples, cache, ckpt = planted
    from ml.prm.train import build_prm

    old = {**ckpt, "state_dict": {k: v for k, v in ckpt["state_dict"].items() if k != "side_weight"}}
    del old["side_dim"]
    prm = build_prm(old, cache=cache)
    assert prm.head.side_dim == 0
    # the planted examples are ungraded: the side columns are zero, so the scores are the same
    np.testing.assert_allclose(
        prm.score_steps(examples[:200]).probs, build_prm(ckpt, cache=cache).score_steps(examples[:200]).probs, atol=1e-6
    )


def test_each_graded_answer_stratum_gets_its_own_first_error_threshold():
    """A head that reads the grade gets one first-error threshold per graded-answer stratum, chosen on
    the training solutions; held-out first-error F1 is read with them. A head blind to the grade
    keeps the one threshold."""
    from ml.prm.examples import examples_from_steps
    from ml.prm.train import _Paths, evaluate, path_grades

    examples = _graded_examples(600, seed=4)
    # ungraded solutions too, with an error at their second step: a third stratum
    rng = np.random.default_rng(5)
    for n in range(120):
        steps = [" ".join(rng.choice([f"u{i}" for i in range(50)], 6)) for _ in range(3)]
        examples += examples_from_steps(f"problem {n % 120}", steps, 1, solution_id=f"u{n}", problem_id=f"p{n % 120}")
    cfg = dict(seed=0, ensemble_size=2, hidden_size=8, step_hash_dim=2048, context_hash_dim=512, max_epochs=15)
    featurizer = HashedNgramFeaturizer(step_hash_dim=2048, context_hash_dim=512)
    cache = FeatureCache(featurizer)
    graded = train_prm(examples, PRMConfig(**cfg), cache=cache)
    blind = train_prm(examples, PRMConfig(**cfg, answer_input=False), cache=cache)
    by_grade = graded["thresholds_by_grade"]
    assert set(by_grade) == {"wrong", "right", "ungraded"} and all(0 < t < 1 for t in by_grade.values())
    assert blind["thresholds_by_grade"] is None
    paths = _Paths.of(examples)
    assert path_grades(examples, paths).count("ungraded") == 120
    # the recorded held-out F1 is the one the strata's thresholds give
    from ml.prm.train import build_prm, split_by_problem

    _, held = split_by_problem(examples, PRMConfig(**cfg).heldout_fraction, 0)
    held_ex = [examples[i] for i in held]
    prm = build_prm(graded, featurizer=featurizer)
    probs = prm.head_probs(prm.cache.get(held_ex).with_side(_answers(held_ex)))
    m = evaluate(held_ex, probs, graded["threshold"], by_grade=by_grade)
    assert m["first_error_f1"] == pytest.approx(graded["metrics"]["heldout"]["first_error_f1"])
    assert graded["metrics"]["heldout"]["first_error_f1"] > 0.9


def _answers(examples):
    from ml.prm.answer_input import answer_block_for_examples

    return answer_block_for_examples(examples)


def test_the_threshold_reads_each_training_step_out_of_bag():
    """A step is scored by the members whose bootstrap left it out (their mean), and by every
    member where none did: a member that fitted a label scores it too confidently."""
    from ml.prm.train import _out_of_bag

    # (K=3 members, n=3 examples, 3 classes); P(-1) is class 0
    p_neg = torch.tensor([[0.9, 0.2, 0.5], [0.1, 0.4, 0.5], [0.3, 0.6, 0.2]])
    probs = torch.stack([p_neg, (1 - p_neg) / 2, (1 - p_neg) / 2], dim=-1)
    boot = torch.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    np.testing.assert_allclose(_out_of_bag(probs, boot), [(0.1 + 0.3) / 2, (0.2 + 0.4) / 2, (0.5 + 0.5 + 0.2) / 3])


def test_a_wrong_answer_is_read_at_its_most_probable_first_error_on_its_whole_chain():
    """Annotators stop at the first -1, so a labeled path ends at its error, and a most probable
    first error read on it would always favour the truth; `evaluate` reads a `MOST_PROBABLE`
    stratum on each solution's whole chain (every step's P(-1), from the threshold pool) instead."""
    from ml.prm.examples import examples_from_steps
    from ml.prm.metrics import MOST_PROBABLE
    from ml.prm.train import evaluate

    wrong = examples_from_steps("p", ["a", "b", "c", "d"], 1, solution_id="a1", problem_id="p1", answer_correct=False)
    right = examples_from_steps("q", ["e", "f"], -1, solution_id="a2", problem_id="p2", answer_correct=True)
    examples = wrong + right
    p_neg = torch.tensor([[0.2, 0.3, 0.1, 0.1]])  # the labeled steps: a, b (the error), e, f
    probs = torch.stack([p_neg, (1 - p_neg) / 2, (1 - p_neg) / 2], dim=-1)
    by_grade = {"wrong": MOST_PROBABLE, "right": 0.5}
    # on the labeled path [0.2, 0.3] the chain's most probable first error is b, the truth
    assert evaluate(examples, probs, 0.5, by_grade=by_grade)["acc_erroneous"] == 1.0
    # the whole chain has c and d at 0.9: c is the most probable first error, and the read is wrong
    chains = {"a1": np.array([0.2, 0.3, 0.9, 0.9])}
    m = evaluate(examples, probs, 0.5, by_grade=by_grade, chains=chains)
    assert m["acc_erroneous"] == 0.0 and m["acc_correct"] == 1.0
    # a threshold reads the first step over it, which the labeled path already decides
    assert evaluate(examples, probs, 0.5, by_grade={"wrong": 0.25, "right": 0.5}, chains=chains)["acc_erroneous"] == 1.0


def test_the_grade_only_reader_is_fitted_on_training_solutions_and_read_on_whole_lengths():
    """A run's held-out metrics carry the F1 of a reader with no PRM (`ml.prm.floor`): one constant
    first error per graded answer, fitted on the training solutions. A labeled path ends at its
    first error, so lengths come from the whole chains; without them there is no such reader."""
    from ml.prm.examples import examples_from_steps
    from ml.prm.train import _grade_only_f1, _Paths

    def solution(sid, n_steps, first_error, correct):
        steps = [f"{sid} step {i}" for i in range(n_steps)]
        return examples_from_steps(sid, steps, first_error, solution_id=sid, problem_id=sid, answer_correct=correct)

    # training: wrong answers err at step 1 (twice) or 3; right answers are error-free
    train = solution("t1", 5, 1, False) + solution("t2", 5, 1, False) + solution("t3", 5, 3, False)
    train += solution("t4", 4, -1, True) + solution("t5", 4, -1, True)
    # held out: one wrong answer erring at step 1 and one at step 2, one right answer
    held = solution("h1", 6, 1, False) + solution("h2", 6, 2, False) + solution("h3", 3, -1, True)
    chains = {
        sid: np.zeros(n) for sid, n in {"t1": 5, "t2": 5, "t3": 5, "t4": 4, "t5": 4, "h1": 6, "h2": 6, "h3": 3}.items()
    }
    f1 = _grade_only_f1(train, _Paths.of(train), held, _Paths.of(held), chains)
    # "step 1" for a wrong answer hits one of two errors, "no error" for a right one hits it
    assert f1 == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert _grade_only_f1(train, _Paths.of(train), held, _Paths.of(held), {}) is None
    # a project without reference answers has no grade to read
    ungraded = solution("u1", 5, 1, None) + solution("u2", 4, -1, None)
    assert (
        _grade_only_f1(
            ungraded, _Paths.of(ungraded), held, _Paths.of(held), {**chains, "u1": np.zeros(5), "u2": np.zeros(4)}
        )
        is None
    )
