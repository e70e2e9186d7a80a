"""Submitting: validation per labeling mode, PRM800K storage, idempotency, late submits."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import Annotation, Assignment, AssignmentStatus, LabelerProfile, Solution
from annotate.services.leases import LeaseConflict, heartbeat, save_draft, skip
from annotate.services.queue import claim_next
from core.errors import Invalid
from labeling_api.serializers_submit import submit_payload
from tests.factories import make_project, make_solutions, make_user, payload

pytestmark = pytest.mark.django_db


def claimed(mode="phase2", n_steps=3, **project_fields):
    project = make_project(labeling_mode=mode, **project_fields)
    make_solutions(project, 2, n_steps=n_steps)
    user = make_user(project=project)
    return project, user, claim_next(project=project, user=user)


def step(index, rating, *, flagged=False, alternatives=(), human=None):
    return {
        "index": index,
        "rating": rating,
        "flagged": flagged,
        "alternatives": [{"text": t, "rating": r, "flagged": False} for t, r in alternatives],
        "human_completion": human,
    }


def body(steps, finish_reason, key="k1", **extra):
    return {"idempotency_key": key, "finish_reason": finish_reason, "total_time_ms": 5000, "steps": steps, **extra}


def errors_of(project_user_assignment, data) -> dict:
    _, user, assignment = project_user_assignment
    with pytest.raises(Invalid) as caught:
        submit_payload(assignment=assignment, user=user, payload=data)
    assert not Annotation.objects.exists()
    return caught.value.errors


# --- storage ------------------------------------------------------------------------------------


def test_phase2_found_error_is_stored_as_prm800k_label_steps():
    project, user, assignment = claimed()
    texts = list(assignment.solution.steps.values_list("text", flat=True))
    data = body(
        [step(0, 1), step(1, 0, flagged=True), step(2, -1, alternatives=[("Better step.", 1), ("Other.", -1)])],
        "found_error",
    )

    result = submit_payload(assignment=assignment, user=user, payload=data)

    annotation = result.annotation
    assert result.created
    assert json.loads(annotation.label_steps) == [
        {
            "completions": [{"text": texts[0], "rating": 1, "flagged": False}],
            "human_completion": None,
            "chosen_completion": 0,
        },
        {
            "completions": [{"text": texts[1], "rating": 0, "flagged": True}],
            "human_completion": None,
            "chosen_completion": 0,
        },
        {
            "completions": [
                {"text": texts[2], "rating": -1, "flagged": False},
                {"text": "Better step.", "rating": 1, "flagged": False},
                {"text": "Other.", "rating": -1, "flagged": False},
            ],
            "human_completion": None,
            "chosen_completion": None,
        },
    ]
    assert (annotation.n_label_steps, annotation.n_positive, annotation.n_neutral, annotation.n_negative) == (
        3,
        1,
        1,
        1,
    )
    assert (annotation.n_flagged, annotation.n_alternatives, annotation.first_error_index) == (1, 2, 2)
    assert annotation.labeler_uuid == str(LabelerProfile.objects.get(user=user).labeler_uuid)
    assert annotation.finish_reason == "found_error" and annotation.total_time_ms == 5000
    assert annotation.idempotency_key == "k1" and annotation.assignment_id == assignment.pk
    assert annotation.generation == project.current_generation and not annotation.is_quality_control
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED
    solution = Solution.objects.get(pk=assignment.solution_id)
    assert solution.annotation_count == 1 and not solution.is_open


def test_phase1_chosen_alternative_and_human_completion():
    _, user, assignment = claimed(mode="phase1")
    data = body(
        [
            step(0, 0, alternatives=[("Alt A.", 0), ("Alt B.", 1)]),
            step(1, -1, alternatives=[("Alt C.", -1)], human="My own step."),
            step(2, 1),
        ],
        "solution",
    )

    steps = json.loads(submit_payload(assignment=assignment, user=user, payload=data).annotation.label_steps)

    assert steps[0]["chosen_completion"] == 2  # the positive alternative
    assert steps[1]["chosen_completion"] is None
    assert steps[1]["human_completion"] == {"text": "My own step.", "rating": None, "source": "human", "flagged": False}
    assert steps[2]["chosen_completion"] == 0


def test_give_up_keeps_reason_and_allows_an_unrated_last_step():
    _, user, assignment = claimed()
    data = body([step(0, 1), step(1, None)], "give_up", reason="  Too long for me.  ")

    annotation = submit_payload(assignment=assignment, user=user, payload=data).annotation

    assert annotation.finish_note == "Too long for me."
    assert json.loads(annotation.label_steps)[1]["chosen_completion"] is None
    assert annotation.n_unrated == 1


def test_bad_problem_with_no_steps():
    _, user, assignment = claimed()
    annotation = submit_payload(
        assignment=assignment, user=user, payload=body([], "bad_problem", reason="Typo")
    ).annotation
    assert annotation.n_label_steps == 0 and annotation.finish_reason == "bad_problem"


# --- validation ---------------------------------------------------------------------------------


def test_rating_must_be_minus_one_zero_one_or_null():
    detail = errors_of(claimed(), body([step(0, 2), step(1, "1"), step(2, True)], "solution"))
    assert set(detail) >= {"steps[0].rating", "steps[1].rating", "steps[2].rating"}


def test_null_rating_only_on_last_step_of_give_up():
    detail = errors_of(claimed(), body([step(0, None), step(1, 1), step(2, 1)], "solution"))
    assert "steps[0].rating" in detail
    detail = errors_of(claimed(), body([step(0, None), step(1, None)], "give_up", reason="x"))
    assert "steps[0].rating" in detail and "steps[1].rating" not in detail


def test_found_error_needs_a_negative_step():
    detail = errors_of(claimed(), body([step(0, 1), step(1, 0)], "found_error"))
    assert "steps" in detail


def test_found_error_nothing_rated_after_the_negative_step():
    detail = errors_of(claimed(), body([step(0, -1), step(1, 1)], "found_error"))
    assert "steps[1].rating" in detail


def test_found_error_drops_unrated_entries_after_the_negative_step():
    _, user, assignment = claimed()
    data = body([step(0, 1), step(1, -1), step(2, None)], "found_error")
    annotation = submit_payload(assignment=assignment, user=user, payload=data).annotation
    assert annotation.n_label_steps == 2


def test_solution_needs_every_step_rated_and_no_negative():
    detail = errors_of(claimed(), body([step(0, 1), step(1, 1)], "solution"))
    assert "steps" in detail
    detail = errors_of(claimed(), body([step(0, 1), step(1, -1), step(2, 1)], "solution"))
    assert "steps[1].rating" in detail


def test_phase1_solution_negative_step_needs_a_positive_alternative_or_human_step():
    detail = errors_of(
        claimed(mode="phase1"), body([step(0, 1), step(1, -1, alternatives=[("x", 0)]), step(2, 1)], "solution")
    )
    assert "steps[1].rating" in detail


def test_give_up_and_bad_problem_need_a_reason():
    assert "reason" in errors_of(claimed(), body([step(0, 1)], "give_up"))
    assert "reason" in errors_of(claimed(), body([], "bad_problem", reason="   "))


def test_indexes_contiguous_from_zero_and_in_range():
    detail = errors_of(claimed(), body([step(0, 1), step(2, 1), step(2, 1)], "solution"))
    assert "steps[1].index" in detail
    detail = errors_of(claimed(), body([step(i, 1) for i in range(4)], "solution"))
    assert "steps" in detail and "steps[3].index" in detail


def test_alternatives_need_non_empty_text_and_a_rating():
    detail = errors_of(claimed(), body([step(0, 1), step(1, -1, alternatives=[("", 1), ("  ", 0)])], "found_error"))
    assert set(detail) == {"steps[1].alternatives[0].text", "steps[1].alternatives[1].text"}
    detail = errors_of(claimed(), body([step(0, 1), step(1, -1, alternatives=[("ok", None)])], "found_error"))
    assert set(detail) == {"steps[1].alternatives[0].rating"}


def test_phase2_alternatives_only_at_the_first_negative_step():
    detail = errors_of(claimed(), body([step(0, 1, alternatives=[("alt", 1)]), step(1, -1)], "found_error"))
    assert "steps[0].alternatives" in detail


def test_top_level_fields_are_checked():
    detail = errors_of(claimed(), {"idempotency_key": "k", "finish_reason": "done", "total_time_ms": -5, "steps": {}})
    assert set(detail) >= {"finish_reason", "total_time_ms", "steps"}
    assert "idempotency_key" in errors_of(claimed(), body([], "bad_problem", key="", reason="x"))
    assert "non_field_errors" in errors_of(claimed(), ["not", "an", "object"])


# --- idempotency and conflicts ------------------------------------------------------------------


def test_repeat_with_same_key_returns_first_result():
    _, user, assignment = claimed()
    first = submit_payload(assignment=assignment, user=user, payload=payload([1, 1, 1], key="same"))
    again = submit_payload(assignment=assignment, user=user, payload=payload([1, 1, 1], key="same"))
    assert first.created and not again.created and again.annotation.pk == first.annotation.pk
    assert Annotation.objects.count() == 1


def test_other_key_on_a_submitted_assignment_is_a_conflict():
    _, user, assignment = claimed()
    submit_payload(assignment=assignment, user=user, payload=payload([1, 1, 1], key="one"))
    with pytest.raises(LeaseConflict):
        submit_payload(assignment=assignment, user=user, payload=payload([1, 1, 1], key="two"))


def test_key_reused_for_another_assignment_is_refused():
    project, user, assignment = claimed()
    submit_payload(assignment=assignment, user=user, payload=payload([1, 1, 1], key="one"))
    following = claim_next(project=project, user=user)
    with pytest.raises(Invalid) as caught:
        submit_payload(assignment=following, user=user, payload=payload([1, 1, 1], key="one"))
    assert "idempotency_key" in caught.value.errors


def test_only_the_owner_can_submit():
    from core.errors import NotFound

    project, _, assignment = claimed()
    with pytest.raises(NotFound):
        submit_payload(assignment=assignment, user=make_user(project=project), payload=payload([1, 1, 1]))


# --- leases -------------------------------------------------------------------------------------


def expire(assignment):
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    assignment.refresh_from_db()


def test_late_submit_accepted_when_nobody_took_the_solution():
    _, user, assignment = claimed()
    expire(assignment)
    result = submit_payload(assignment=assignment, user=user, payload=payload([1, 1, 1]))
    assert result.created
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.SUBMITTED


def test_late_submit_refused_when_another_annotator_took_it_and_work_is_kept():
    project, user, assignment = claimed(overlap=1)
    Solution.objects.filter(project=project).exclude(pk=assignment.solution_id).delete()
    expire(assignment)
    other = make_user(project=project)
    taken = claim_next(project=project, user=other)
    assert taken.solution_id == assignment.solution_id  # the expired lease freed it

    with pytest.raises(LeaseConflict) as caught:
        submit_payload(assignment=assignment, user=user, payload=payload([1, 1, 1]))

    assert "another annotator" in str(caught.value.detail)
    assert not Annotation.objects.exists()
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.EXPIRED
    assert assignment.draft["refused_submit"]["steps"][0]["rating"] == 1
    # The other annotator's work goes through.
    assert submit_payload(assignment=taken, user=other, payload=payload([1, 1, 1], key="x")).created


def test_late_submit_with_overlap_two_is_accepted_while_room_remains():
    project, user, assignment = claimed(overlap=2)
    Solution.objects.filter(project=project).exclude(pk=assignment.solution_id).delete()
    expire(assignment)
    other = make_user(project=project)
    assert claim_next(project=project, user=other).solution_id == assignment.solution_id
    assert submit_payload(assignment=assignment, user=user, payload=payload([1, 1, 1])).created


def test_heartbeat_extends_and_renews_expired_lease_when_free():
    project, user, assignment = claimed(lease_minutes=10)
    before = assignment.lease_expires_at
    assert heartbeat(assignment=assignment, user=user).lease_expires_at >= before
    expire(assignment)
    renewed = heartbeat(assignment=assignment, user=user)
    assert renewed.lease_expires_at > timezone.now() + timedelta(minutes=9)


def test_heartbeat_after_losing_the_lease_is_a_conflict():
    project, user, assignment = claimed(overlap=1)
    Solution.objects.filter(project=project).exclude(pk=assignment.solution_id).delete()
    expire(assignment)
    claim_next(project=project, user=make_user(project=project))
    with pytest.raises(LeaseConflict):
        heartbeat(assignment=assignment, user=user)
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.EXPIRED


def test_reload_returns_the_same_assignment_with_its_draft():
    project, user, assignment = claimed()
    save_draft(assignment=assignment, user=user, draft={"ratings": [1, 0]})
    again = claim_next(project=project, user=user)
    assert again.pk == assignment.pk and again.draft == {"ratings": [1, 0]}


def test_own_expired_assignment_is_renewed_on_reload_when_free():
    project, user, assignment = claimed()
    expire(assignment)
    again = claim_next(project=project, user=user)
    assert again.pk == assignment.pk and again.lease_expires_at > timezone.now()


def test_skipped_solution_is_never_served_again():
    project = make_project()
    make_solutions(project, 2)
    user = make_user(project=project)
    first = claim_next(project=project, user=user)
    skip(assignment=first, user=user)
    second = claim_next(project=project, user=user)
    assert second.solution_id != first.solution_id
    skip(assignment=second, user=user)
    assert claim_next(project=project, user=user) is None
    # ...but another annotator gets it.
    assert claim_next(project=project, user=make_user(project=project)).solution_id == first.solution_id


def test_claim_records_generation_strategy_and_score():
    from ml.models import TrainingRun

    # queued by a model run: that run's generation and score
    project = make_project(current_generation=4)
    run = TrainingRun.objects.create(project=project, status="succeeded")
    make_solutions(project, 1, strategy="uncertainty", verifier_score=0.25, generation=3, model_run_id=run.pk)
    assignment = claim_next(project=project, user=make_user(project=project))
    assert (assignment.generation, assignment.strategy, assignment.verifier_score) == (3, "uncertainty", 0.25)
    # no run of ours queued it (an imported PRM800K record keeps OpenAI's generation and verifier
    # score): a label made here is this project's round's, with no PRM score
    project2 = make_project(current_generation=4)
    make_solutions(project2, 1, generation=6, verifier_score=0.9)
    assignment = claim_next(project=project2, user=make_user(project=project2))
    assert (assignment.generation, assignment.verifier_score) == (4, None)


def test_highest_priority_first():
    project = make_project()
    solutions = make_solutions(project, 5)
    Solution.objects.filter(pk=solutions[3].pk).update(priority=1000)
    assert claim_next(project=project, user=make_user(project=project)).solution_id == solutions[3].pk
    assert claim_next(project=project, user=make_user(project=project)).solution_id == solutions[0].pk
