"""The grade-only reader the simulation sets beside the PRM's curves (ml.prm.floor), on hand cases."""

from ml.prm.floor import fit_floor, floor_f1

WRONG, RIGHT, UNGRADED = 0, 1, -1


def test_one_constant_per_stratum_chosen_jointly_for_f1():
    # graded-wrong answers: first errors at steps 1, 1, 2; graded-right: no error, but one at step 0
    strata = [WRONG, WRONG, WRONG, RIGHT, RIGHT, RIGHT]
    lengths = [4, 4, 4, 3, 3, 3]
    truth = [1, 1, 2, -1, -1, 0]
    rule = fit_floor(strata, lengths, truth)
    assert rule == {WRONG: 1, RIGHT: -1}
    # erroneous: 2 of 4 hit (the right answer's step-0 error is missed); error-free: 2 of 2
    assert floor_f1(strata, lengths, truth, rule) == 2 * 0.5 * 1.0 / 1.5


def test_a_constant_past_a_short_solution_reads_its_last_step():
    rule = {WRONG: 5}
    assert floor_f1([WRONG, WRONG], [2, 7], [1, 5], rule) == 1.0  # step 5 clipped to step 1 of the first


def test_an_ungraded_set_has_one_stratum_and_may_read_no_error_everywhere():
    strata = [UNGRADED] * 4
    truth = [-1, -1, -1, 3]
    rule = fit_floor(strata, [5] * 4, truth)
    assert set(rule) == {UNGRADED}
    # a constant step flags all three error-free solutions (F1 0); "no error" misses the erroneous one
    # (F1 0 too): on a tie the first candidate, "no error", is kept
    assert rule[UNGRADED] == -1
    assert floor_f1(strata, [5] * 4, truth, rule) == 0.0
