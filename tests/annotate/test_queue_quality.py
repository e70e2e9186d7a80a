"""Gold questions at the QC rate, agreement with gold, and screening."""

import pytest
from django.utils import timezone

from annotate.models import AnnotatorStatus, Assignment, Role, ScreeningStatus
from annotate.selectors.stats import project_stats
from annotate.services.leases import LeaseConflict, skip
from annotate.services.quality import gold_agreement
from annotate.services.queue import ScreeningFailed, claim_next
from annotate.services.submit import claim_after_submit
from labeling_api.serializers_submit import submit_payload
from prm800k.agreement import compare_with_gold, krippendorff_alpha_ordinal
from tests.factories import (
    gold_label_steps,
    make_gold_annotation,
    make_project,
    make_solutions,
    make_user,
    payload,
)

pytestmark = pytest.mark.django_db


# --- agreement, hand-checked --------------------------------------------------------------------


def test_step_accuracy_and_first_error_on_hand_checked_cases():
    same_error = compare_with_gold(steps=gold_label_steps([1, 0, 0, -1]), gold_steps=gold_label_steps([1, 1, 0, -1]))
    assert (same_error.steps_compared, same_error.steps_matched, same_error.accuracy) == (4, 3, 0.75)
    assert same_error.first_error_match

    earlier = compare_with_gold(steps=gold_label_steps([1, -1]), gold_steps=gold_label_steps([1, 1, -1]))
    assert (earlier.steps_compared, earlier.steps_matched) == (2, 1)  # only steps both rated count
    assert not earlier.first_error_match

    no_errors = compare_with_gold(steps=gold_label_steps([1, 0, 1]), gold_steps=gold_label_steps([1, 1, 1]))
    assert no_errors.first_error_match and no_errors.accuracy == pytest.approx(2 / 3)


def test_unrated_steps_are_not_compared_and_the_chosen_completion_is_the_main_line():
    mine = gold_label_steps([1, 1])
    mine[1]["completions"][0]["rating"] = None
    mine[1]["chosen_completion"] = None
    phase1 = {
        "completions": [{"text": "a", "rating": -1, "flagged": False}, {"text": "b", "rating": 1, "flagged": False}],
        "human_completion": None,
        "chosen_completion": 1,
    }
    result = compare_with_gold(steps=[*mine, phase1], gold_steps=gold_label_steps([1, 0, 1]))
    # step 0 matches, step 1 unrated (skipped), step 2 main line is the chosen +1 alternative.
    assert (result.steps_compared, result.steps_matched, result.first_error_match) == (2, 2, True)


def test_gold_agreement_pools_an_annotators_qc_answers():
    project = make_project(qc_rate=1.0)
    golds = make_solutions(project, 2, is_gold=True)
    make_gold_annotation(golds[0], [1, 1, 1])
    make_gold_annotation(golds[1], [1, 0, -1])
    make_solutions(project, 3)
    user = make_user(project=project)
    answers = {golds[0].pk: [1, 1, 1], golds[1].pk: [1, -1]}  # 3/3 and 1/2 steps; first errors 2 vs 1
    for i in range(2):
        assignment = claim_next(project=project, user=user)
        assert assignment.solution_id in answers  # qc_rate 1.0: gold first
        result = submit_payload(
            assignment=assignment, user=user, payload=payload(answers[assignment.solution_id], key=str(i))
        )
        assert result.annotation.is_quality_control

    summary = gold_agreement(project=project, user=user)

    assert (summary.solutions_compared, summary.steps_compared, summary.steps_matched) == (2, 5, 4)
    assert summary.accuracy == pytest.approx(0.8)
    assert summary.first_error_matches == 1 and summary.first_error_rate == 0.5
    # Once every gold question is answered, regular work follows even at qc_rate 1.0.
    following = claim_next(project=project, user=user)
    assert not following.solution.is_gold


# --- gold injection rate ------------------------------------------------------------------------


def test_gold_is_served_at_the_qc_rate_within_tolerance():
    project = make_project(qc_rate=0.25, overlap=1)
    make_solutions(project, 450)
    make_solutions(project, 250, is_gold=True, priority_from=10_000)  # higher priority must not matter
    user = make_user(project=project)
    claims = 400
    for _ in range(claims):
        skip(assignment=claim_next(project=project, user=user), user=user)

    gold = Assignment.objects.filter(annotator=user, solution__is_gold=True).count()
    # Binomial(400, 0.25): mean 100, sd 8.7; +-4 sd.
    assert 65 <= gold <= 135, gold
    status = AnnotatorStatus.objects.get(project=project, user=user)
    assert (status.tasks_served, status.gold_served) == (claims, gold)


def test_no_gold_at_qc_rate_zero():
    project = make_project(qc_rate=0.0)
    make_solutions(project, 20)
    make_solutions(project, 20, is_gold=True, priority_from=1000)
    user = make_user(project=project)
    for _ in range(20):
        assignment = claim_next(project=project, user=user)
        assert not assignment.solution.is_gold
        skip(assignment=assignment, user=user)
    assert claim_next(project=project, user=user) is None


def test_gold_is_not_limited_by_overlap():
    project = make_project(qc_rate=1.0, overlap=1)
    (gold,) = make_solutions(project, 1, is_gold=True)
    make_gold_annotation(gold, [1, 1, 1])
    make_solutions(project, 5)
    served = [claim_next(project=project, user=make_user(project=project)).solution_id for _ in range(3)]
    assert served == [gold.pk] * 3


# --- screening ----------------------------------------------------------------------------------


@pytest.fixture
def screening_project():
    project = make_project(screening_required=2, screening_threshold=0.75, overlap=1)
    make_solutions(project, 5, priority_from=100)  # regular work outranks screening in priority
    for solution in make_solutions(project, 3, is_screening=True):
        make_gold_annotation(solution, [1, 1, 1])
    return project


def test_screening_first_then_regular_work_after_passing(screening_project):
    project = screening_project
    user = make_user(project=project)
    for i in range(2):
        assignment = claim_next(project=project, user=user)
        assert assignment.solution.is_screening
        with pytest.raises(LeaseConflict):
            skip(assignment=assignment, user=user)
        annotation = submit_payload(
            assignment=assignment, user=user, payload=payload([1, 1, 0 if i else 1], key=str(i))
        ).annotation
        assert annotation.is_screening and not annotation.is_quality_control

    status = AnnotatorStatus.objects.get(project=project, user=user)
    assert status.screening_status == ScreeningStatus.PASSED
    assert status.screening_submitted == 2 and status.screening_agreement == pytest.approx(5 / 6)
    following = claim_next(project=project, user=user)
    assert not following.solution.is_screening


def test_failing_screening_blocks_further_work(screening_project):
    project = screening_project
    user = make_user(project=project)
    assignment = claim_next(project=project, user=user)
    submit_payload(assignment=assignment, user=user, payload=payload([1, 0, 0], key="a"))
    assignment = claim_next(project=project, user=user)
    submit_payload(assignment=assignment, user=user, payload=payload([0, 0, 1], key="b"))

    status = AnnotatorStatus.objects.get(project=project, user=user)
    assert status.screening_status == ScreeningStatus.FAILED and status.screening_agreement == pytest.approx(2 / 6)
    with pytest.raises(ScreeningFailed) as caught:
        claim_next(project=project, user=user)
    assert "did not pass screening" in str(caught.value.detail)
    following, message = claim_after_submit(project=project, user=user)
    assert following is None and "did not pass screening" in message
    # Unblocking is a lead's decision: resetting the status lets the annotator try again.
    AnnotatorStatus.objects.filter(pk=status.pk).update(screening_status=ScreeningStatus.PASSED)
    assert not claim_next(project=project, user=user).solution.is_screening


def test_screening_pool_exhausted_serves_nothing(screening_project):
    project = screening_project
    project.screening_required = 5
    project.save()
    user = make_user(project=project)
    for i in range(3):
        submit_payload(
            assignment=claim_next(project=project, user=user), user=user, payload=payload([1, 1, 1], key=str(i))
        )
    assert claim_next(project=project, user=user) is None


def test_leads_are_exempt_from_screening(screening_project):
    lead = make_user(project=screening_project, role=Role.LEAD)
    assert not claim_next(project=screening_project, user=lead).solution.is_screening


# --- inter-annotator agreement ------------------------------------------------------------------


def test_krippendorff_alpha_hand_checked():
    # Two values: o11=4, o10=o01=1, o00=2; n1=5, n0=3, n=8 -> alpha = 1 - (2/8) / (2*5*3/(8*7)) = 8/15.
    assert krippendorff_alpha_ordinal([[1, 1], [1, 1], [1, 0], [0, 0]]) == pytest.approx(8 / 15)
    # Ordinal, three values: n(-1)=1, n(0)=2, n(1)=1; delta2(-1,0)=delta2(0,1)=2.25, delta2(-1,1)=9;
    # D_o = (2*2.25 + 2*2.25)/4 = 2.25, D_e = (2*2*2.25 + 2*2*2.25 + 2*1*9)/12 = 3 -> alpha = 0.25.
    assert krippendorff_alpha_ordinal([[1, 0], [0, -1]]) == pytest.approx(0.25)
    assert krippendorff_alpha_ordinal([[1, 1], [0, 0], [-1, -1]]) == pytest.approx(1.0)
    # Unpairable units are ignored; no variation at all leaves alpha undefined.
    assert krippendorff_alpha_ordinal([[1], [1, 1, 1]]) is None
    assert krippendorff_alpha_ordinal([]) is None


def test_ordinal_metric_penalizes_distant_disagreement_more():
    near = krippendorff_alpha_ordinal([[1, 0], [1, 1], [0, 0], [-1, -1], [-1, -1], [1, 1]])
    far = krippendorff_alpha_ordinal([[1, -1], [1, 1], [0, 0], [-1, -1], [0, 0], [1, 1]])
    assert near > far


def test_dashboard_agreement_over_overlapping_labels():
    """The dashboard's agreement (what replaced the tests-only quality.project_agreement)."""
    project = make_project(overlap=2)
    solutions = make_solutions(project, 2)
    first, second = make_user(project=project), make_user(project=project)
    answers = {first.pk: [[1, 1, 1], [1, -1]], second.pk: [[1, 0, 1], [1, -1]]}
    for user in (first, second):
        for n in range(2):
            assignment = claim_next(project=project, user=user)
            ratings = answers[user.pk][solutions.index(next(s for s in solutions if s.pk == assignment.solution_id))]
            submit_payload(assignment=assignment, user=user, payload=payload(ratings, key=f"{user.pk}-{n}", reason="x"))

    quality = project_stats(project=project, now=timezone.now())["quality"]
    stats = quality["agreement"]

    assert stats["solutions_compared"] == 2
    # Units: (1,1), (1,0), (1,1) on the first solution; (1,1), (-1,-1) on the second.
    assert stats["alpha"] == pytest.approx(krippendorff_alpha_ordinal([[1, 1], [1, 0], [1, 1], [1, 1], [-1, -1]]))
    assert stats["first_error_agreement"] == 1.0
    rows = {row["labels"]: row for row in quality["annotators"]}
    assert len(quality["annotators"]) == 2 and set(rows) == {2}
    by_neutral = sorted(row["neutral_rate"] for row in quality["annotators"])
    assert by_neutral == [0.0, pytest.approx(1 / 5)]
    assert all(row["flag_rate"] == 0.0 and row["gold_accuracy"] is None for row in quality["annotators"])


def test_a_lead_sets_screening_on_the_settings_page_and_a_lowered_rule_decides_at_once(screening_project):
    """Was: screening was set in the admin only, and an annotator who had answered every screening
    question of a project asking for more stayed pending, served nothing, after a lead lowered it."""
    from django.test import Client

    from annotate.models import AuditEvent

    project = screening_project
    project.screening_required = 5
    project.save()
    user = make_user(project=project)
    for i in range(3):  # every screening question there is, all as the gold label rates them
        submit_payload(
            assignment=claim_next(project=project, user=user), user=user, payload=payload([1, 1, 1], key=str(i))
        )
    assert claim_next(project=project, user=user) is None  # 3 of 5: pending, nothing left to serve
    lead = make_user(project=project, role=Role.LEAD)
    client = Client()
    client.force_login(lead)
    page = client.get(f"/projects/{project.slug}/settings/")
    assert "Screening answers required" in page.content.decode() and "Screening pass mark" in page.content.decode()
    form = {
        name: value
        for name, value in page.context["form"].initial.items()
        if name in page.context["form"].fields and value is not None and value is not False
    } | {"name": "Screened"}
    refused = client.post(f"/projects/{project.slug}/settings/", {**form, "screening_threshold": 1.5})
    assert refused.status_code == 200 and "screening_threshold" in refused.context["form"].errors
    saved = client.post(f"/projects/{project.slug}/settings/", {**form, "screening_required": 3})
    assert saved.status_code == 302, saved.context["form"].errors if saved.status_code == 200 else saved
    project.refresh_from_db()
    assert project.screening_required == 3
    status = AnnotatorStatus.objects.get(project=project, user=user)
    assert status.screening_status == ScreeningStatus.PASSED and status.screening_agreement == pytest.approx(1.0)
    assert not claim_next(project=project, user=user).solution.is_screening  # regular work now
    event = AuditEvent.objects.filter(project=project, action="project.settings_changed").latest("pk")
    assert event.details["changes"]["screening_required"] == [5, 3] and event.details["screening_decided"] == 1
