"""Selection strategies and solution roll-ups order as specified."""

import numpy as np
import pytest

from ml.prm.model import roll_up, solution_scores
from ml.prm.selection import convincing_wrong_priority, mix_priority, priorities, top_k, uncertainty_priority


def test_solution_scores_product_and_min():
    p_neg = np.array([0.1, 0.2, 0.5, 0.0])
    prod, mins = solution_scores(p_neg, [2, 1, 0, 1])
    assert prod == pytest.approx([0.9 * 0.8, 0.5, 1.0, 1.0])
    assert mins == pytest.approx([0.8, 0.5, 1.0, 1.0])


def test_roll_up():
    v = np.array([0.1, 0.7, 0.3, 0.2])
    assert roll_up(v, [3, 1], "max").tolist() == pytest.approx([0.7, 0.2])
    assert roll_up(v, [3, 1], "mean").tolist() == pytest.approx([11 / 30, 0.2])


def test_uncertainty_most_uncertain_first():
    assert top_k(uncertainty_priority([0.1, 0.9, 0.5]), 3).tolist() == [1, 2, 0]


def test_convincing_wrong_high_score_wrong_answer_first():
    scores = [0.9, 0.8, 0.3, 0.95, 0.6]
    correct = [False, True, False, True, None]
    order = top_k(convincing_wrong_priority(scores, correct), 5).tolist()
    # wrong answers by score (0, 2), then ungraded (4), then correct ones by score (3, 1)
    assert order == [0, 2, 4, 3, 1]


def test_mix_is_four_convincing_wrong_to_one_most_convincing():
    n = 20
    scores = np.linspace(0.05, 1.0, n)  # solution i has score rank i (higher index = more convincing)
    correct = [i % 2 == 0 for i in range(n)]  # odd indices are wrong
    order = top_k(mix_priority(scores, correct), n).tolist()
    assert sorted(order) == list(range(n))
    wrong_by_score = [19, 17, 15, 13, 11, 9, 7, 5, 3, 1]
    # slots 1-4 from the convincing-wrong ranking, slot 5 the most convincing not yet taken (18)
    assert order[:5] == [19, 17, 15, 13, 18]
    assert order[5:10] == [11, 9, 7, 5, 16]
    first10 = order[:10]
    assert sum(i in wrong_by_score for i in first10) == 8


def test_random_is_seeded_and_dispatch():
    a = priorities("random", n=5, rng=np.random.default_rng(3))
    b = priorities("random", n=5, rng=np.random.default_rng(3))
    assert np.array_equal(a, b) and len(set(a.tolist())) == 5
    with pytest.raises(ValueError):
        priorities("nope", scores=[1.0])


def test_answer_stratified_gives_wrong_answers_half_the_expected_labels_of_any_queue_head():
    rng = np.random.default_rng(0)
    n = 400
    correct = [bool(c) for c in rng.random(n) < 0.7] + [None] * 20  # 30% graded wrong, some ungraded
    lengths = rng.integers(3, 12, size=len(correct))
    pri = priorities("answer_stratified", answer_correct=correct, lengths=lengths, rng=np.random.default_rng(1))
    order = top_k(pri, len(pri)).tolist()
    assert sorted(order) == list(range(len(correct))) and len(set(pri.tolist())) == len(pri)
    wrong = np.asarray([c is False for c in correct])
    cost = np.where(wrong, (lengths + 1) / 2, lengths)
    for head in (20, 60, 120):  # while both strata last, the wrong one holds about half the expected labels
        idx = np.asarray(order[:head])
        share = cost[idx][wrong[idx]].sum() / cost[idx].sum()
        assert 0.4 <= share <= 0.6, (head, share)
    # random within a stratum: the same seed gives the same queue, another seed another one
    again = priorities("answer_stratified", answer_correct=correct, lengths=lengths, rng=np.random.default_rng(1))
    other = priorities("answer_stratified", answer_correct=correct, lengths=lengths, rng=np.random.default_rng(2))
    assert np.array_equal(pri, again) and not np.array_equal(pri, other)
