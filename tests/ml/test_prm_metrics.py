"""Metrics on hand-made cases."""

import numpy as np
import pytest

from ml.prm.metrics import (
    MOST_PROBABLE,
    auroc,
    choose_map_cut,
    choose_stratum_thresholds,
    choose_threshold,
    ece,
    first_error_f1,
    first_error_f1_interval,
    first_error_map,
    first_error_predictions,
    flag_share,
    map_predictions,
    step_metrics,
    stratum_predictions,
    wilson_interval,
)


def test_auroc_hand_cases():
    # positives 0.35, 0.8 vs negatives 0.1, 0.4: pairs won 1 + 2 of 4
    assert auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == pytest.approx(0.75)
    assert auroc([0, 1], [0.2, 0.9]) == 1.0
    assert auroc([1, 0], [0.2, 0.9]) == 0.0
    assert auroc([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]) == 0.5  # ties count half
    assert auroc([0, 0, 1], [0.1, 0.3, 0.3]) == pytest.approx(0.75)
    assert auroc([1, 1], [0.1, 0.2]) is None


def test_ece_hand_case():
    # every prediction 80% confident, half of them right: ECE = |0.8 - 0.5| = 0.3
    probs = np.array([[0.8, 0.1, 0.1]] * 4)
    assert ece([0, 0, 1, 2], probs) == pytest.approx(0.3)
    # perfectly calibrated two-bin case
    probs = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert ece([0, 2], probs) == pytest.approx(0.0)


def test_first_error_f1_hand_case():
    p = [[0.1, 0.9, 0.2], [0.1, 0.2], [0.7, 0.1], [0.2, 0.3, 0.6]]
    pred = first_error_predictions(p, 0.5)
    assert pred.tolist() == [1, -1, 0, 2]
    true = [1, -1, -1, 1]
    # erroneous: solution 0 right, solution 3 wrong -> 0.5; correct ones: 1 right, 2 wrong -> 0.5
    m = first_error_f1(pred, true)
    assert m["acc_erroneous"] == 0.5 and m["acc_correct"] == 0.5 and m["first_error_f1"] == pytest.approx(0.5)
    m = first_error_f1([1, -1, -1, 1], true)
    assert m["first_error_f1"] == 1.0
    m = first_error_f1([-1, -1, -1, -1], true)  # never flags: all correct ones right, no errors found
    assert m["acc_correct"] == 1.0 and m["acc_erroneous"] == 0.0 and m["first_error_f1"] == 0.0
    assert 0.2 <= choose_threshold(p, true) < 0.9


def test_step_metrics():
    y = np.array([0, 2, 2, 1])
    probs = np.array([[0.7, 0.1, 0.2], [0.2, 0.1, 0.7], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])
    m = step_metrics(y, probs)
    assert m["auroc_negative"] == 1.0 and m["accuracy"] == 1.0 and m["n_negative"] == 1
    assert m["nll"] == pytest.approx(-np.mean(np.log([0.7, 0.7, 0.8, 0.4])))


def test_wilson_interval_hand_cases():
    # 5 of 5 right is no proof of a perfect model: the 95% interval reaches down to 0.57.
    lo, hi = wilson_interval(5, 5)
    assert lo == pytest.approx(0.5655, abs=1e-4) and hi == 1.0
    lo, hi = wilson_interval(80, 100)
    assert lo == pytest.approx(0.7112, abs=1e-4) and hi == pytest.approx(0.8666, abs=1e-4)
    assert wilson_interval(0, 0) is None
    m = step_metrics(np.array([0, 2]), np.array([[0.9, 0.05, 0.05], [0.1, 0.1, 0.8]]))
    assert m["accuracy"] == 1.0 and m["accuracy_ci"] == pytest.approx(wilson_interval(2, 2))


def test_first_error_f1_interval_is_wide_on_few_solutions_and_narrow_on_many():
    few = first_error_f1_interval([1, -1, 2], [1, -1, 0])
    assert few[0] < 0.5 and few[1] == 1.0
    rng = np.random.default_rng(1)
    true = rng.integers(-1, 4, size=400)
    pred = np.where(rng.random(400) < 0.8, true, -1)  # right 80% of the time
    lo, hi = first_error_f1_interval(pred, true)
    point = first_error_f1(pred, true)["first_error_f1"]
    assert lo < point < hi and hi - lo < 0.15
    assert first_error_f1_interval([], []) is None
    # the four-cell multinomial draw is the bootstrap over solutions: the same interval as
    # resampling the solutions themselves, up to Monte Carlo error
    draws = np.random.default_rng(7).integers(0, 400, size=(4000, 400))
    f1 = [first_error_f1(pred[d], true[d])["first_error_f1"] for d in draws]
    assert [lo, hi] == pytest.approx(np.quantile(f1, [0.025, 0.975]), abs=0.01)


def test_first_error_map_is_the_most_probable_first_error_and_its_margin():
    """Vectorised over solutions, it agrees with the chain read one solution at a time."""
    rng = np.random.default_rng(3)
    seqs = [rng.uniform(0.001, 0.999, size=n) ** 3 for n in rng.integers(0, 9, size=300)]
    index, margin = first_error_map(seqs)
    for p, k, m in zip(seqs, index, margin, strict=True):
        if len(p) == 0:
            assert k == -1 and m == -np.inf
            continue
        joint = [p[j] * np.prod(1 - p[:j]) for j in range(len(p))]
        assert k == int(np.argmax(joint))
        assert m == pytest.approx(np.log(max(joint)) - np.log(np.prod(1 - p)), abs=1e-6)
    pred = flag_share(index, margin, 0.4)
    flagged = pred[np.isfinite(margin)] != -1
    assert flagged.mean() == pytest.approx(0.4, abs=0.01)
    assert np.array_equal(pred[np.isfinite(margin)][flagged], index[np.isfinite(margin)][flagged])
    # a sure error at step 2 behind two sure steps is found there, whatever follows it
    k, m = first_error_map([[0.01, 0.01, 0.99, 0.99]])
    assert k[0] == 2 and m[0] > 5


def test_map_cut_is_chosen_for_f1_and_map_predictions_apply_it():
    """The cut separates the solutions whose most probable first error is real from the error-free ones;
    with every solution flagged (the cut under every margin) the error-free ones all count wrong."""
    err = [[0.05, 0.9, 0.2], [0.8, 0.1]]  # first errors at 1 and 0
    ok = [[0.1, 0.2, 0.1], [0.15, 0.05]]
    seqs, true = err + ok, np.array([1, 0, -1, -1])
    cut = choose_map_cut(seqs, true)
    pred = map_predictions(seqs, cut)
    assert list(pred) == [1, 0, -1, -1]
    assert first_error_f1(pred, true)["first_error_f1"] == 1.0
    _, margin = first_error_map(seqs)
    assert list(map_predictions(seqs, float(margin.min()) - 1.0)) == [1, 0, 1, 0]


def test_weights_count_solutions_in_first_error_f1_and_move_the_chosen_threshold():
    from ml.prm.metrics import choose_threshold, first_error_f1

    # two erroneous solutions (first error at step 1) and two correct ones
    pred, true = np.array([1, 0, -1, 1]), np.array([1, 1, -1, -1])
    assert first_error_f1(pred, true)["acc_erroneous"] == 0.5
    assert first_error_f1(pred, true, weights=[3, 1, 1, 1])["acc_erroneous"] == 0.75
    assert first_error_f1(pred, true, weights=[1, 1, 1, 3])["acc_correct"] == 0.25
    # zero weight on every correct solution (a stratum the population lacks): that group is missing
    assert first_error_f1(pred, true, weights=[1, 1, 0, 0]) == first_error_f1(pred[:2], true[:2]) | {"n_solutions": 4}
    # two erroneous solutions (error at step 1) that want different thresholds (the first one
    # in [0.1, 0.5), the second in [0.3, 0.8)) and a correct one that both satisfy: the heavier wins
    seqs = [np.array([0.1, 0.5]), np.array([0.3, 0.8]), np.array([0.2])]
    truth = np.array([1, 1, -1])
    grid = [0.25, 0.6]
    assert choose_threshold(seqs, truth, grid=grid, weights=[5, 1, 1]) == 0.25
    assert choose_threshold(seqs, truth, grid=grid, weights=[1, 5, 1]) == 0.6


def test_population_weights_undo_a_selection_on_the_largest_step_p_negative():
    from ml.prm.reweight import population_weights, solution_max

    assert solution_max(np.array([0.1, 0.4, 0.2, 0.9, 0.3]), [3, 0, 2]).tolist() == [0.4, 0.0, 0.9]
    rng = np.random.default_rng(0)
    pool = rng.uniform(size=5000)
    # a random sample of the pool: weights near 1
    fair = population_weights(rng.choice(pool, 1000, replace=False), pool)
    assert np.allclose(fair, 1, atol=0.2)
    # a sample drawn mostly from the top fifth (as uncertainty or convincing-wrong picks): those
    # count less, the rest more, and the weighted strata match the pool's (a fifth each)
    picked = np.concatenate([pool[pool > 0.8][:400], pool[pool <= 0.8][:100]])
    w = population_weights(picked, pool)
    top = picked > np.quantile(pool, 0.8)
    assert w[top].max() < 1 < w[~top].min()
    assert abs(w[top].sum() / w.sum() - 0.2) < 0.01


def test_one_threshold_per_stratum_where_no_single_threshold_fits_both():
    """Graded-wrong answers whose first error sits at P(-1) 0.3 beside error-free right answers whose
    steps run up to 0.5: one threshold gets one stratum wrong, one per stratum gets every solution."""
    wrong = [[0.1, 0.3, 0.6], [0.3, 0.2]]  # first errors at 1 and 0
    right = [[0.2, 0.5], [0.45, 0.1, 0.1]]  # no error
    seqs, true = wrong + right, np.array([1, 0, -1, -1])
    strata = [False, False, True, True]
    grid = np.linspace(0.05, 0.95, 19)
    single = first_error_predictions(seqs, choose_threshold(seqs, true, grid=grid))
    assert first_error_f1(single, true)["first_error_f1"] < 1.0
    th = choose_stratum_thresholds(seqs, true, strata, grid=grid)
    assert set(th) == {False, True} and 0.1 <= th[False] < 0.3 and th[True] >= 0.5
    pred = stratum_predictions(seqs, strata, th)
    assert list(pred) == [1, 0, -1, -1]
    # a stratum the thresholds do not name (an ungraded solution) gets the default
    assert list(stratum_predictions([[0.4, 0.9]], [None], th, default=0.5)) == [1]


def test_stratum_thresholds_trade_the_two_accuracies_by_weight():
    """Within one stratum the chosen threshold follows the weights, as `choose_threshold`'s does."""
    seqs = [np.array([0.1, 0.5]), np.array([0.3, 0.8]), np.array([0.2])]
    truth = np.array([1, 1, -1])
    grid = [0.25, 0.6]
    assert choose_stratum_thresholds(seqs, truth, [None] * 3, grid=grid, weights=[5, 1, 1]) == {None: 0.25}
    assert choose_stratum_thresholds(seqs, truth, [None] * 3, grid=grid, weights=[1, 5, 1]) == {None: 0.6}


def test_a_forced_stratum_is_read_at_its_most_probable_first_error():
    """A graded-wrong answer always holds an error: its stratum gets no threshold but the chain's
    most probable first error, so a wrong answer whose steps all sit below the right answers' P(-1)
    is still flagged, at the right step; the other stratum's threshold is chosen around it."""
    wrong = [[0.12, 0.2, 0.1], [0.1, 0.05]]  # first errors at 1 and 0: no one threshold reads both
    right = [[0.2, 0.3], [0.25, 0.1]]  # no error
    seqs, true = wrong + right, np.array([1, 0, -1, -1])
    strata = [False, False, True, True]
    grid = np.linspace(0.05, 0.95, 19)
    plain = choose_stratum_thresholds(seqs, true, strata, grid=grid)
    assert first_error_f1(stratum_predictions(seqs, strata, plain), true)["first_error_f1"] < 1.0
    th = choose_stratum_thresholds(seqs, true, strata, grid=grid, forced={False})
    assert th[False] == MOST_PROBABLE and th[True] >= 0.3
    assert list(stratum_predictions(seqs, strata, th)) == [1, 0, -1, -1]
    # never "no error" in a forced stratum, whatever its P(-1)
    assert list(stratum_predictions([[0.001, 0.002]], [False], th)) == [1]
