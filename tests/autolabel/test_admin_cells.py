"""How the admin's step-by-step comparison shows an automatic label."""

from autolabel.admin import _auto_cell


def test_a_label_shows_its_estimate_over_its_completions_or_where_it_came_from():
    assert _auto_cell(None) == "·"
    assert _auto_cell({"label": 1, "estimate": 0.75, "n_completions": 4, "inferred": False}) == "+ (0.75 of 4)"
    # the free last-step label of a graded solution: no completion was spent, so no "of 0"
    free = _auto_cell({"label": -1, "estimate": 0.0, "n_completions": 0, "inferred": False})
    assert free == "- (from the graded answer)"
    assert _auto_cell({"label": -1, "estimate": None, "n_completions": 0, "inferred": True}) == "- inferred"
