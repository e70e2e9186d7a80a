"""Compare projects (issue 16) through the API on PostgreSQL: import with pairing, claiming a pair
with a recorded candidate order, submitting a preference (validation, idempotency, leases), and
the TRL preference export."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from annotate.models import Annotation, Assignment, Comparison, PairReason, Preference, Project, Role, Solution
from annotate.services.compare.pairs import choose_pairs
from tests.api_clients import member_client
from tests.compare_lines import LINES

pytestmark = pytest.mark.django_db


@pytest.fixture
def compare_project(tmp_path: Path) -> Project:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    call_command("import_prm800k", str(path), "--project", "duel", "--task", "compare", "--pairs-per-problem", "2")
    return Project.objects.get(slug="duel")


@pytest.fixture
def annotator(compare_project):
    return member_client(compare_project, "ann", Role.ANNOTATOR)


def _lines(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]


def test_import_makes_a_compare_project_with_informative_pairs_first(compare_project):
    assert compare_project.task_kind == "compare"
    pairs = list(Comparison.objects.filter(project=compare_project).select_related("solution_a", "solution_b"))
    # 2+2: three solutions, budget 2; 3*3: one pair; the lonely problem: none.
    assert len(pairs) == 3
    for pair in pairs:
        assert pair.solution_a.problem_id == pair.solution_b.problem_id == pair.problem_id
        # every pair made here has one right and one wrong answer: the most informative kind
        assert pair.reason == PairReason.ANSWERS_DIFFER
        assert {pair.solution_a.answer_correct, pair.solution_b.answer_correct} == {True, False}


def test_importing_again_adds_no_pairs_and_a_steps_project_refuses_compare(compare_project, tmp_path):
    path = tmp_path / "again.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    call_command("import_prm800k", str(path), "--project", "duel", "--pairs-per-problem", "2")
    assert Comparison.objects.filter(project=compare_project).count() == 3  # the budget is spent already
    Project.objects.create(slug="steps-only")
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="is a steps project"):
        call_command("import_prm800k", str(path), "--project", "steps-only", "--task", "compare")


def test_choose_pairs_spreads_the_budget_and_prefers_graded_disagreement():
    rows = [
        {"id": 1, "answer_correct": True, "final_answer": "4", "verifier_score": 0.9},
        {"id": 2, "answer_correct": True, "final_answer": "4", "verifier_score": 0.7},
        {"id": 3, "answer_correct": False, "final_answer": "5", "verifier_score": 0.85},
        {"id": 4, "answer_correct": True, "final_answer": "4", "verifier_score": 0.1},
    ]
    pairs = choose_pairs(rows, per_problem=2)
    assert [(a["id"], b["id"], reason) for a, b, reason in pairs] == [
        (1, 3, PairReason.ANSWERS_DIFFER),  # the closest scores among right-vs-wrong pairs
        (2, 4, PairReason.CLOSE_SCORES),  # then solutions not yet used
    ]


def test_next_task_serves_a_pair_in_a_recorded_random_order(compare_project, annotator):
    response = annotator.get("/api/v1/projects/duel/tasks/next/")
    assert response.status_code == 200, response.content
    task = response.json()
    assert task["kind"] == "compare"
    assert task["problem"]["text"] in {"What is 2+2?", "What is $3 \\cdot 3$?"}
    assert len(task["candidates"]) == 2
    assignment = Assignment.objects.get(pk=task["assignment_id"])
    pair = assignment.comparison
    expected = (
        [pair.solution_b_id, pair.solution_a_id] if assignment.swapped else [pair.solution_a_id, pair.solution_b_id]
    )
    assert [c["solution_id"] for c in task["candidates"]] == expected
    assert all(c["steps"] and c["steps"][0]["index"] == 0 for c in task["candidates"])
    # a reload returns the same assignment and order
    assert annotator.get("/api/v1/projects/duel/tasks/next/").json()["candidates"] == task["candidates"]


def test_both_orders_are_drawn_across_assignments(compare_project):
    Project.objects.filter(pk=compare_project.pk).update(overlap=12)
    swapped = set()
    for i in range(12):
        client = member_client(compare_project, f"a{i}", Role.ANNOTATOR)
        task = client.get("/api/v1/projects/duel/tasks/next/").json()
        swapped.add(Assignment.objects.get(pk=task["assignment_id"]).swapped)
    assert swapped == {True, False}  # chance of one value only: 2 * 2**-12


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"preference": "C", "strength": 1, "total_time_ms": 5}, "preference"),
        ({"preference": "A", "strength": 4, "total_time_ms": 5}, "strength"),
        ({"preference": "A", "strength": True, "total_time_ms": 5}, "strength"),
        ({"preference": "B", "strength": 2, "total_time_ms": -1}, "total_time_ms"),
        ({"preference": "B", "strength": 2, "total_time_ms": 5, "first_wrong": {"A": 99}}, "first_wrong.A"),
        ({"preference": "B", "strength": 2, "total_time_ms": 5, "steps": []}, "steps"),
        ({"strength": 2, "total_time_ms": 5}, "preference"),
    ],
)
def test_a_bad_preference_is_refused_by_field_and_changes_nothing(compare_project, annotator, body, field):
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    response = annotator.post(
        f"/api/v1/assignments/{task['assignment_id']}/submit/", {"idempotency_key": "k1", **body}, format="json"
    )
    assert response.status_code == 400, response.content
    assert field in json.dumps(response.json())
    assert Preference.objects.count() == 0
    assert Assignment.objects.get(pk=task["assignment_id"]).status == "active"


def test_submit_stores_the_preference_in_pair_terms_once(compare_project, annotator):
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    body = {
        "idempotency_key": "once",
        "preference": "A",
        "strength": 3,
        "total_time_ms": 1234,
        "note": "B adds wrong",
        "first_wrong": {"B": 0},
    }
    url = f"/api/v1/assignments/{task['assignment_id']}/submit/"
    first = annotator.post(url, body, format="json")
    assert first.status_code == 201, first.content
    again = annotator.post(url + "?next=false", body, format="json")
    assert again.status_code == 200 and again.json()["preference_id"] == first.json()["preference_id"]
    preference = Preference.objects.get()
    left_id = task["candidates"][0]["solution_id"]
    pair = preference.comparison
    assert preference.shown == "A" and preference.strength == 3 and preference.note == "B adds wrong"
    assert preference.preferred == ("A" if left_id == pair.solution_a_id else "B")
    # the first-wrong mark was on the right candidate: the pair's other solution
    right_is_a = task["candidates"][1]["solution_id"] == pair.solution_a_id
    assert (preference.first_wrong_a, preference.first_wrong_b) == ((0, None) if right_is_a else (None, 0))
    assert pair.annotation_count == 1 and pair.is_open is False  # overlap 1
    # the next task came with the answer and is another pair
    assert first.json()["next"]["kind"] == "compare"
    assert first.json()["next"]["assignment_id"] != task["assignment_id"]


def test_a_late_submit_after_someone_took_the_pair_is_refused_and_kept(compare_project, annotator):
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    Assignment.objects.filter(pk=task["assignment_id"]).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    other = member_client(compare_project, "other", Role.ANNOTATOR)
    served = set()
    for _ in range(3):  # the other annotator takes every open pair, the expired one included
        following = other.get("/api/v1/projects/duel/tasks/next/").json()
        served.add(Assignment.objects.get(pk=following["assignment_id"]).comparison_id)
        other.post(
            f"/api/v1/assignments/{following['assignment_id']}/submit/?next=false",
            {"idempotency_key": f"o{len(served)}", "preference": "tie", "total_time_ms": 1},
            format="json",
        )
    response = annotator.post(
        f"/api/v1/assignments/{task['assignment_id']}/submit/",
        {"idempotency_key": "late", "preference": "B", "strength": 1, "total_time_ms": 9},
        format="json",
    )
    assert response.status_code == 409, response.content
    # its first sentence is what the compare page shows; no "Not recorded" list there to point to
    assert response.json()["detail"] == (
        "Your lease expired and another annotator took this pair, so this answer was not recorded. The answer is "
        "kept for API clients as a refused submit in your progress (refused_submits, GET /api/v1/projects/duel/me/)."
    )
    assert Preference.objects.filter(annotator=annotator.user).count() == 0
    assert Assignment.objects.get(pk=task["assignment_id"]).draft["refused_submit"]["preference"] == "B"


def test_another_answer_with_the_same_key_is_refused_and_kept(compare_project, annotator):
    """Two tabs on one pair share the draft's key: the second, other answer is a 409, not a silent replay."""
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    url = f"/api/v1/assignments/{task['assignment_id']}/submit/?next=false"
    sent = {"idempotency_key": "tab", "preference": "A", "strength": 2, "total_time_ms": 9}
    assert annotator.post(url, sent, format="json").status_code == 201
    assert annotator.post(url, {**sent, "total_time_ms": 50}, format="json").status_code == 200  # a retry
    other = {**sent, "preference": "B"}
    refused = annotator.post(url, other, format="json")
    assert refused.status_code == 409 and "another tab or device" in refused.json()["detail"]
    [stored] = Preference.objects.filter(annotator=annotator.user)
    assert stored.shown == "A"
    assert Assignment.objects.get(pk=task["assignment_id"]).draft["refused_submit"]["preference"] == "B"


def test_a_non_member_cannot_claim_and_a_stranger_cannot_submit(compare_project, annotator):
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    stranger = member_client(Project.objects.create(slug="elsewhere"), "stranger", Role.ANNOTATOR)
    assert stranger.get("/api/v1/projects/duel/tasks/next/").status_code == 404
    response = stranger.post(
        f"/api/v1/assignments/{task['assignment_id']}/submit/",
        {"idempotency_key": "x", "preference": "A", "strength": 1, "total_time_ms": 1},
        format="json",
    )
    assert response.status_code == 404
    assert Preference.objects.count() == 0


def test_preference_export_holds_the_answers_with_margins_and_ties_on_request(compare_project, annotator, tmp_path):
    answers = [("A", 2), ("B", 1), ("tie", 1)]
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    shown = []
    for key, (preference, strength) in enumerate(answers):
        shown.append(task)
        response = annotator.post(
            f"/api/v1/assignments/{task['assignment_id']}/submit/",
            {"idempotency_key": f"k{key}", "preference": preference, "strength": strength, "total_time_ms": 10},
            format="json",
        )
        assert response.status_code == 201, response.content
        task = response.json()["next"]
    assert task is None  # three pairs, all done
    lead = member_client(compare_project, "lead", Role.LEAD)
    rows = _lines(lead.get("/api/v1/projects/duel/export/?format=preference"))
    assert len(rows) == 2  # the tie is left out
    for row, served, (preference, strength) in zip(rows, shown[:2], answers[:2], strict=True):
        assert set(row) == {"prompt", "chosen", "rejected", "margin"}
        assert row["prompt"] == served["problem"]["text"] + "\n"
        texts = ["\n".join(step["text"] for step in c["steps"]) for c in served["candidates"]]
        winner, loser = (texts[0], texts[1]) if preference == "A" else (texts[1], texts[0])
        assert (row["chosen"], row["rejected"], row["margin"]) == (winner, loser, float(strength))
    with_ties = _lines(lead.get("/api/v1/projects/duel/export/?format=preference&ties=include"))
    assert len(with_ties) == 3 and with_ties[2]["margin"] == 0.0
    bad = lead.get("/api/v1/projects/duel/export/?format=prm800k&ties=include")
    assert bad.status_code == 400 and "ties" in json.dumps(bad.json())
    out = tmp_path / "prefs.jsonl"
    call_command("export_prm800k", "--project", "duel", "--format", "preference", "--out", str(out))
    assert [json.loads(line) for line in out.read_text().splitlines()] == rows
    # What an ML engineer does with the file: the datasets library reads it as TRL's preference type.
    import datasets
    from trl.data_utils import is_conversational

    dataset = datasets.load_dataset("json", data_files=str(out), split="train")
    assert dataset.column_names == ["prompt", "chosen", "rejected", "margin"]
    assert dataset.features["margin"].dtype == "float64" and len(dataset) == 2
    assert not is_conversational(dataset[0])  # plain text rows: RewardTrainer tokenizes prompt + chosen


def test_preference_export_pulls_incrementally_splits_and_refuses_step_filters(compare_project, annotator):
    """A cursor from a preference export brings only the preferences submitted after it; `split`
    applies by problem; the step-label filters are refused with the field, never ignored; and a
    project that labels steps refuses format=preference."""

    def submit(task, key):
        response = annotator.post(
            f"/api/v1/assignments/{task['assignment_id']}/submit/",
            {"idempotency_key": key, "preference": "A", "strength": 1, "total_time_ms": 10},
            format="json",
        )
        assert response.status_code == 201, response.content
        return response.json()["next"]

    lead = member_client(compare_project, "lead", Role.LEAD)
    task = submit(annotator.get("/api/v1/projects/duel/tasks/next/").json(), "k0")
    first = lead.get("/api/v1/projects/duel/export/?format=preference")
    assert len(_lines(first)) == 1
    cursor = first["X-Export-Cursor"]
    again = lead.get("/api/v1/projects/duel/export/", {"format": "preference", "since": cursor})
    assert _lines(again) == [] and again["X-Export-Cursor"] == cursor
    submit(task, "k1")
    newer = lead.get("/api/v1/projects/duel/export/", {"format": "preference", "since": cursor})
    rows = _lines(newer)
    assert len(rows) == 1 and newer["X-Export-Cursor"] != cursor
    assert len(_lines(lead.get("/api/v1/projects/duel/export/?format=preference"))) == 2

    assert len(_lines(lead.get("/api/v1/projects/duel/export/?format=preference&split=train"))) == 2
    assert _lines(lead.get("/api/v1/projects/duel/export/?format=preference&split=test")) == []  # no MATH-500 here
    problem = Preference.objects.order_by("pk").first().comparison.problem
    type(problem).objects.filter(pk=problem.pk).update(is_math500=True)
    on_test = Preference.objects.filter(comparison__problem=problem).count()
    assert len(_lines(lead.get("/api/v1/projects/duel/export/?format=preference&split=test"))) == on_test
    assert len(_lines(lead.get("/api/v1/projects/duel/export/?format=preference&split=train"))) == 2 - on_test

    for query in ("generation=1", "finish_reason=give_up", "screening=only", "min_agreement=1"):
        name = query.split("=")[0]
        refused = lead.get(f"/api/v1/projects/duel/export/?format=preference&{query}")
        assert refused.status_code == 400 and name in refused.json(), (query, refused.content)
        job = lead.post("/api/v1/projects/duel/exports/", {"format": "preference", name: query.split("=")[1]})
        assert job.status_code == 400 and name in job.json(), (query, job.content)

    steps = Project.objects.create(slug="steps-only", name="Steps")
    step_lead = member_client(steps, "steps-lead", Role.LEAD)
    refused = step_lead.get("/api/v1/projects/steps-only/export/?format=preference")
    assert refused.status_code == 400 and "compare" in refused.json()["format"][0]


def test_pair_quality_stats_measure_position_bias_agreement_grading_and_gold(compare_project):
    Project.objects.filter(pk=compare_project.pk).update(overlap=2, qc_rate=1.0)  # the gold pair comes first
    gold = Comparison.objects.filter(project=compare_project).order_by("id").first()
    Comparison.objects.filter(pk=gold.pk).update(gold_preference="A", is_gold=True)
    left_clicker = member_client(compare_project, "lefty", Role.ANNOTATOR)
    grader = member_client(compare_project, "grader", Role.ANNOTATOR)

    def answer_all(client, choose) -> None:
        task = client.get("/api/v1/projects/duel/tasks/next/").json()
        n = 0
        while task:
            response = client.post(
                f"/api/v1/assignments/{task['assignment_id']}/submit/",
                {
                    "idempotency_key": f"{client.user.pk}-{n}",
                    "preference": choose(task),
                    "strength": 1,
                    "total_time_ms": 3,
                },
                format="json",
            )
            assert response.status_code == 201, response.content
            task, n = response.json()["next"], n + 1

    def right_one(task) -> str:
        pair = Assignment.objects.get(pk=task["assignment_id"]).comparison
        right_id = pair.solution_a_id if pair.solution_a.answer_correct else pair.solution_b_id
        return "A" if task["candidates"][0]["solution_id"] == right_id else "B"

    answer_all(left_clicker, lambda task: "A")
    answer_all(grader, right_one)
    lead = member_client(compare_project, "lead", Role.LEAD)
    assert left_clicker.get("/api/v1/projects/duel/compare-stats/").status_code == 403
    body = lead.get("/api/v1/projects/duel/compare-stats/").json()

    prefs = list(Preference.objects.select_related("comparison__solution_a"))
    assert body["preferences"] == len(prefs) == 6 and body["pairs_answered"] == 3
    lefts = sum(p.shown == "A" for p in prefs)
    assert body["position_bias_left"]["share"] == round(lefts / 6, 4) and lefts >= 3  # the left-clicker's three
    lefty_right = sum(
        (p.preferred == "A") == p.comparison.solution_a.answer_correct for p in prefs if p.annotator.username == "lefty"
    )
    assert body["agreement_with_grading"] == {
        "share": round((3 + lefty_right) / 6, 4),
        "n": 6,
        "ci95": body["agreement_with_grading"]["ci95"],
    }
    assert body["agreement"]["n"] == 3 and body["agreement"]["share"] == round(lefty_right / 3, 4)
    gold_answers = [p.preferred for p in prefs if p.comparison_id == gold.pk]
    assert body["gold_accuracy"]["n"] == 2
    assert body["gold_accuracy"]["share"] == round(sum(a == "A" for a in gold_answers) / 2, 4)


def test_first_wrong_marks_become_step_labels_in_the_prm800k_export(
    compare_project, annotator, django_capture_on_commit_callbacks
):
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    right = task["candidates"][1]["solution_id"]
    with django_capture_on_commit_callbacks(execute=True):
        response = annotator.post(
            f"/api/v1/assignments/{task['assignment_id']}/submit/?next=false",
            {"idempotency_key": "m", "preference": "A", "strength": 2, "total_time_ms": 5, "first_wrong": {"B": 1}},
            format="json",
        )
    assert response.status_code == 201, response.content
    preference = Preference.objects.get()
    # one step label, of the marked (right-hand) solution only: steps before the mark +1, the mark -1
    annotation = Annotation.objects.get(project=compare_project)
    assert annotation.solution_id == right and annotation.annotator_id == annotator.user.pk
    side = "A" if right == preference.comparison.solution_a_id else "B"
    assert annotation.idempotency_key == f"compare:{preference.pk}:{side}"
    assert (annotation.n_positive, annotation.n_negative, annotation.first_error_index) == (1, 1, 1)
    # the marked solution counts as labeled (the dashboard's progress and wrong-answer share), the other not
    counts = dict(Solution.objects.filter(project=compare_project).values_list("pk", "annotation_count"))
    assert counts[right] == 1 and sum(counts.values()) == 1
    lead_stats = member_client(compare_project, "stats-lead", Role.LEAD).get("/api/v1/projects/duel/stats/").json()
    assert lead_stats["progress"]["solutions_labeled"] == 1
    # the retrain counter of a compare project counts the preference once, not its step labels
    compare_project.refresh_from_db()
    assert compare_project.step_labels_since_run == 1
    lead = member_client(compare_project, "lead", Role.LEAD)
    records = _lines(lead.get("/api/v1/projects/duel/export/?format=prm800k"))
    assert len(records) == 1
    record = records[0]
    served = [step["text"] for step in task["candidates"][1]["steps"]]
    assert record["label"]["finish_reason"] == "found_error"
    assert record["label"]["total_time"] == 5  # the pair's time: a PRM800K reader expects a number
    assert [s["completions"][0]["text"] for s in record["label"]["steps"]] == served[:2]
    assert [s["completions"][0]["rating"] for s in record["label"]["steps"]] == [1, -1]
    assert [s["chosen_completion"] for s in record["label"]["steps"]] == [0, None]
    assert record["labeler"] == preference.labeler_uuid
    # and TRL's stepwise rows for PRMTrainer
    trl_rows = _lines(lead.get("/api/v1/projects/duel/export/?format=trl"))
    assert [(row["completions"], row["labels"]) for row in trl_rows] == [(served[:2], [True, False])]
    # a submit without marks adds no step label
    following = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    annotator.post(
        f"/api/v1/assignments/{following['assignment_id']}/submit/?next=false",
        {"idempotency_key": "n", "preference": "B", "strength": 1, "total_time_ms": 5},
        format="json",
    )
    assert Preference.objects.count() == 2 and Annotation.objects.count() == 1


def test_marks_carry_the_round_and_one_solution_marked_in_two_pairs_is_one_label(compare_project, annotator):
    Project.objects.filter(pk=compare_project.pk).update(current_generation=4)
    marked: dict[int, int] = {}  # solution id -> its first mark's index
    served = 0
    while (reply := annotator.get("/api/v1/projects/duel/tasks/next/")).status_code == 200:
        task = reply.json()
        served += 1
        # mark the last step of both sides, every time: a solution shared by two pairs is marked twice
        first_wrong = {side: len(c["steps"]) - 1 for side, c in zip("AB", task["candidates"], strict=True)}
        response = annotator.post(
            f"/api/v1/assignments/{task['assignment_id']}/submit/?next=false",
            {
                "idempotency_key": f"k{served}",
                "preference": "A",
                "strength": 1,
                "total_time_ms": 5,
                "first_wrong": first_wrong,
            },
            format="json",
        )
        assert response.status_code == 201, response.content
        for candidate in task["candidates"]:
            marked.setdefault(candidate["solution_id"], len(candidate["steps"]) - 1)
    assert served == Preference.objects.count() and served > len(marked) / 2  # some solution was in two pairs
    shared = served * 2 - len(marked)
    assert shared > 0, "the fixture should put a solution in two pairs"
    labels = list(Annotation.objects.filter(project=compare_project))
    assert sorted(a.solution_id for a in labels) == sorted(marked)  # one label per marked solution, not per mark
    assert {a.generation for a in labels} == {4}
    counts = dict(Solution.objects.filter(project=compare_project).values_list("pk", "annotation_count"))
    assert all(counts[solution] == 1 for solution in marked)
    lead = member_client(compare_project, "lead", Role.LEAD)
    records = _lines(lead.get("/api/v1/projects/duel/export/?format=prm800k"))
    assert len(records) == len(marked) and {r["generation"] for r in records} == {4}
    assert _lines(lead.get("/api/v1/projects/duel/export/?format=prm800k&generation=4")) == records


def test_a_cursor_is_used_only_with_its_own_sequence_and_two_marks_get_two_keys(compare_project, annotator):
    """Found by the ML engineer walkthrough: a prm800k cursor with format=preference answered 200
    with nothing (the preferences since were skipped), and the two marks of one answer exported
    under one (labeler, timestamp) key."""
    lead = member_client(compare_project, "lead", Role.LEAD)
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    both = {"A": 0, "B": len(task["candidates"][1]["steps"]) - 1}
    annotator.post(
        f"/api/v1/assignments/{task['assignment_id']}/submit/?next=false",
        {"idempotency_key": "t1", "preference": "tie", "total_time_ms": 5, "first_wrong": both},
        format="json",
    )
    records = _lines(lead.get("/api/v1/projects/duel/export/?format=prm800k"))
    assert len(records) == 2 and len({(r["labeler"], r["timestamp"]) for r in records}) == 2
    assert sorted(r["label"]["total_time"] for r in records) == [2, 3]  # the pair's 5 ms, split between its marks
    steps_cursor = lead.get("/api/v1/projects/duel/export/?format=prm800k")["X-Export-Cursor"]
    prefs_cursor = lead.get("/api/v1/projects/duel/export/?format=preference&ties=include")["X-Export-Cursor"]
    crossed = lead.get(f"/api/v1/projects/duel/export/?format=preference&since={steps_cursor}")
    assert crossed.status_code == 400 and "not in the preferences" in crossed.json()["since"][0]
    crossed = lead.get(f"/api/v1/projects/duel/export/?format=trl&since={prefs_cursor}")
    assert crossed.status_code == 400 and "use it with format=preference" in crossed.json()["since"][0]
    following = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    annotator.post(
        f"/api/v1/assignments/{following['assignment_id']}/submit/?next=false",
        {"idempotency_key": "t2", "preference": "A", "strength": 2, "total_time_ms": 5},
        format="json",
    )
    newer = _lines(lead.get(f"/api/v1/projects/duel/export/?format=preference&ties=include&since={prefs_cursor}"))
    assert len(newer) == 1 and newer[0]["margin"] == 2.0


def test_a_trace_pair_marks_a_rated_step_and_its_label_leaves_observations_unrated(tmp_path):
    """A trace's observations are shown, not rated (unless the project rates them): a mark may not
    name one (400 by side), and the step label of a mark after one keeps it null, as the workspace
    stores it, instead of rating it +1."""
    problem = "How many days from 2024-02-27 to 2024-03-02?"
    steps = [
        {"type": "thought", "text": "Use the calendar tool."},
        {"type": "tool_call", "text": 'days_between({"start": "2024-02-27", "end": "2024-03-02"})'},
        {"type": "observation", "text": '{"days": 4}'},
        {"type": "answer", "text": "3 days"},
    ]
    other = [{"type": "thought", "text": "Count by hand."}, {"type": "answer", "text": "4"}]
    lines = [
        {"kind": "trace", "problem": problem, "ground_truth_answer": "4", "steps": steps},
        {"kind": "trace", "problem": problem, "ground_truth_answer": "4", "steps": other},
    ]
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    call_command("import_prm800k", str(path), "--project", "agents", "--task", "compare")
    project = Project.objects.get(slug="agents")
    client = member_client(project, "ann", Role.ANNOTATOR)
    task = client.get("/api/v1/projects/agents/tasks/next/").json()
    side = next(s for s, c in zip("AB", task["candidates"], strict=True) if len(c["steps"]) == 4)
    assert [s["rated"] for s in task["candidates"]["AB".index(side)]["steps"]] == [True, True, False, True]
    url = f"/api/v1/assignments/{task['assignment_id']}/submit/?next=false"
    body = {"idempotency_key": "t", "preference": "A", "strength": 1, "total_time_ms": 5}
    refused = client.post(url, {**body, "first_wrong": {side: 2}}, format="json")
    assert refused.status_code == 400, refused.content
    assert "not rated" in refused.json()[f"first_wrong.{side}"][0]
    assert not Preference.objects.exists() and not Annotation.objects.exists()
    response = client.post(url, {**body, "first_wrong": {side: 3}}, format="json")
    assert response.status_code == 201, response.content
    annotation = Annotation.objects.get()
    assert (annotation.n_positive, annotation.n_unrated, annotation.n_negative) == (2, 1, 1)
    lead = member_client(project, "lead", Role.LEAD)
    (record,) = _lines(lead.get("/api/v1/projects/agents/export/?format=prm800k"))
    label_steps = record["label"]["steps"]
    assert [s["completions"][0]["rating"] for s in label_steps] == [1, 1, None, -1]
    assert [s["chosen_completion"] for s in label_steps] == [0, 0, 0, None]


def test_a_code_pair_carries_its_language_and_tests(tmp_path):
    """The compare page draws a code pair as code (numbered, highlighted lines, the tests above)."""
    problem = "Write `sq(x)`: x squared."
    lines = [
        {"kind": "code", "language": "python", "problem": problem, "tests": "assert sq(3) == 9", "steps": steps}
        for steps in (["def sq(x):", "    return x ** 2"], ["def sq(x):", "    return x * 2"])
    ]
    path = tmp_path / "code.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    call_command("import_prm800k", str(path), "--project", "codes", "--task", "compare")
    client = member_client(Project.objects.get(slug="codes"), "ann", Role.ANNOTATOR)
    task = client.get("/api/v1/projects/codes/tasks/next/").json()
    assert (task["kind"], task["language"], task["tests"]) == ("compare", "python", "assert sq(3) == 9")
    assert {c["steps"][1]["text"] for c in task["candidates"]} == {"    return x ** 2", "    return x * 2"}


def test_my_progress_counts_pairs_answered_and_their_time_once(compare_project, annotator):
    """/me/ counted a compare project's first-wrong marks as "solutions" and summed their time
    (split from the preference's) with nothing for the pairs: the compare page had no progress."""
    before = annotator.get("/api/v1/projects/duel/me/").json()
    assert (before["pairs_today"], before["pairs_total"], before["time_today_ms"]) == (0, 0, 0)
    for n, time_ms in enumerate((4000, 6000)):
        task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
        body = {"idempotency_key": f"p{n}", "preference": "A", "strength": 2, "total_time_ms": time_ms}
        body["first_wrong"] = {"B": 0}  # a mark: an annotation carrying part of this time
        url = f"/api/v1/assignments/{task['assignment_id']}/submit/?next=false"
        assert annotator.post(url, body, format="json").status_code == 201
    me = annotator.get("/api/v1/projects/duel/me/").json()
    assert (me["pairs_today"], me["pairs_total"]) == (2, 2)
    assert me["time_today_ms"] == 10_000  # the preferences' time, not again the marks' share of it


def test_a_deleted_preference_is_listed_in_its_own_sequence(compare_project, annotator, django_user_model):
    """`export/deletions/?format=preference` lists a preference deleted after a preference pull; the
    step-label deletions of the same project do not, and numbering goes on above the tombstone."""
    lead = member_client(compare_project, "lead", Role.LEAD)
    task = annotator.get("/api/v1/projects/duel/tasks/next/").json()
    submitted = annotator.post(
        f"/api/v1/assignments/{task['assignment_id']}/submit/",
        {"idempotency_key": "k0", "preference": "A", "strength": 2, "total_time_ms": 10},
        format="json",
    )
    assert submitted.status_code == 201, submitted.content
    cursor = lead.get("/api/v1/projects/duel/export/?format=preference")["X-Export-Cursor"]
    preference = Preference.objects.get(project=compare_project)
    root = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    admin = Client()
    admin.force_login(root)
    assert admin.post(f"/admin/annotate/preference/{preference.pk}/delete/", {"post": "yes"}).status_code == 302

    listed = lead.get("/api/v1/projects/duel/export/deletions/", {"format": "preference", "since": cursor})
    assert listed.status_code == 200, listed.content
    assert [d["labeler"] for d in listed.json()["deletions"]] == [preference.labeler_uuid]
    assert lead.get("/api/v1/projects/duel/export/deletions/").json() == {"deletions": []}
    after = lead.get("/api/v1/projects/duel/export/", {"format": "preference", "since": cursor})
    assert _lines(after) == []
    later = lead.get(
        "/api/v1/projects/duel/export/deletions/", {"format": "preference", "since": after["X-Export-Cursor"]}
    )
    assert later.json() == {"deletions": []}
