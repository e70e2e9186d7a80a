"""Dashboard throughput, label distribution, the per-annotator quality table and agreement, on the
campaign of tests/annotate/stats_campaign.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache

from annotate.models import AnnotatorStatus
from annotate.selectors.stats import project_stats
from annotate.selectors.stats import quality as stats_quality
from tests.annotate.stats_campaign import NOW, new_label, new_solution

pytestmark = pytest.mark.django_db


def test_throughput_series_and_medians(campaign):
    t = project_stats(project=campaign["project"], now=NOW)["throughput"]
    hourly = t["hourly"]
    assert len(hourly["buckets"]) == 48
    assert hourly["buckets"][0] == "2026-01-08T13:00:00+00:00"
    assert hourly["buckets"][-1] == "2026-01-10T12:00:00+00:00"
    expected = [0] * 48
    expected[47] = expected[46] = expected[45] = expected[42] = 1  # 12:00 ann, 11:30 bob, 10:30 bob, 07:30 ann
    assert hourly["labels"] == expected
    assert hourly["steps"][47] == 3 and hourly["steps"][46] == 2 and sum(hourly["steps"]) == 11
    assert [(a["annotator"], sum(a["labels"])) for a in hourly["by_annotator"]] == [("ann", 2), ("bob", 2)]
    assert hourly["by_annotator"][0]["labels"][42] == 1 and hourly["by_annotator"][1]["labels"][46] == 1
    daily = t["daily"]
    assert daily["buckets"][0] == "2025-12-12T00:00:00+00:00" and daily["buckets"][-1] == "2026-01-10T00:00:00+00:00"
    assert daily["labels"][-1] == 4 and daily["labels"][-4] == 1 and sum(daily["labels"]) == 5
    assert t["labels_last_24h"] == 4
    # per solution: 40, 60, 30, 20, 50 s; per step: 13.3, 20, 10, 10, 16.7 s
    assert t["median_seconds_per_solution"] == 40.0
    assert t["median_seconds_per_step"] == pytest.approx(13.333, abs=1e-3)


def test_label_distribution(campaign):
    labels = project_stats(project=campaign["project"], now=NOW)["labels"]
    assert labels == {
        "ratings": {"positive": 9, "neutral": 1, "negative": 4, "unrated": 0},
        "steps": 14,
        "flagged": 1,
        "flag_rate": 1 / 14,
        "alternatives": 0,
        "finish_reasons": {"solution": 1, "found_error": 4, "give_up": 0, "bad_problem": 0},
        "wrong_answer": {"labeled_solutions": 2, "wrong": 1, "correct": 1, "ungraded": 0, "share": 0.5},
    }


def test_quality_table_and_agreement(campaign, monkeypatch):
    monkeypatch.setattr(stats_quality, "MIN_GOLD_FOR_FLAG", 1)  # one gold answer each here
    quality = project_stats(project=campaign["project"], now=NOW)["quality"]
    assert quality["threshold"] == 0.8 and quality["flag_min_gold"] == 1
    rows = {r["annotator"]: r for r in quality["annotators"]}
    assert [r["annotator"] for r in quality["annotators"]] == ["ann", "bob", "cy"]
    ann, bob, cy = rows["ann"], rows["bob"], rows["cy"]
    assert (ann["labels"], ann["steps"], ann["positive_rate"], ann["negative_rate"]) == (3, 9, 7 / 9, 2 / 9)
    assert ann["flag_rate"] == 1 / 9
    assert ann["median_seconds_per_solution"] == 40.0
    assert ann["median_seconds_per_step"] == pytest.approx(13.333, abs=1e-3)
    assert (ann["gold_accuracy"], ann["gold_first_error_rate"], ann["gold_solutions"]) == (1.0, 1.0, 1)
    assert (ann["screening_status"], ann["screening_agreement"], ann["below_threshold"]) == ("passed", 0.9, False)
    assert ann["last_label_at"] == (NOW - timedelta(minutes=30)).isoformat()
    # bob answered the gold question [1,1,-1] with [1,-1]: 1 of 2 steps, first error at 1 not 2
    assert (bob["labels"], bob["steps"], bob["neutral_rate"]) == (2, 5, 1 / 5)
    assert (bob["gold_accuracy"], bob["gold_first_error_rate"], bob["below_threshold"]) == (0.5, 0.0, True)
    assert bob["median_seconds_per_solution"] == 40.0 and bob["median_seconds_per_step"] == 15.0
    assert bob["screening_status"] == "not_required"  # the campaign asks for no screening
    # cy failed screening and has no labels yet
    assert (cy["labels"], cy["gold_accuracy"], cy["screening_status"], cy["below_threshold"]) == (
        0,
        None,
        "failed",
        True,
    )
    # S1: [1,1,-1] vs [1,0,-1] (same first error); G1: [1,-1] vs [1,1,-1] (first errors differ)
    assert quality["agreement"] == {
        "overlap": 2,
        "solutions_compared": 2,
        "sample_limit": 500,
        "sampled": False,
        "alpha": pytest.approx(11 / 28),  # hand-computed, coincidence matrix n = (3, 1, 6)
        "pairs": 2,
        "first_error_agreement": 0.5,
    }


def test_screening_answers_stay_out_of_agreement(campaign):
    """Everyone who applies answers the screening questions, those who fail too: two answers there
    that disagree on everything change neither alpha nor first-error agreement."""
    project = campaign["project"]
    before = project_stats(project=project, now=NOW)["quality"]["agreement"]
    screening = new_solution(project, n_steps=3, count=2, is_screening=True, is_open=False)
    new_label(screening, campaign["ann"], [1, 1, 1], at=NOW - timedelta(hours=1), ms=5000, is_screening=True)
    new_label(screening, campaign["cy"], [-1], at=NOW - timedelta(hours=1), ms=5000, is_screening=True)
    cache.clear()  # the stats snapshot of the first call
    assert project_stats(project=project, now=NOW)["quality"]["agreement"] == before


def test_screening_column_says_not_required_without_screening(campaign):
    """A project that asks for no screening shows "not_required", not a "pending" that never resolves;
    decided outcomes stay. With screening required, an undecided annotator is pending."""
    project = campaign["project"]
    AnnotatorStatus.objects.create(project=project, user=campaign["bob"])  # pending, the model's default

    def statuses():
        rows = project_stats(project=project, now=NOW)["quality"]["annotators"]
        return {r["annotator"]: r["screening_status"] for r in rows}

    assert statuses() == {"ann": "passed", "bob": "not_required", "cy": "failed"}
    project.screening_required = 2
    project.save(update_fields=["screening_required"])
    assert statuses() == {"ann": "passed", "bob": "pending", "cy": "failed"}


def test_gold_accuracy_alone_turns_a_row_red_only_over_a_few_gold_answers(campaign):
    """Was: 1 of 2 gold steps wrong on a single gold question made bob's row red, a verdict on one answer."""
    quality = project_stats(project=campaign["project"], now=NOW)["quality"]
    rows = {r["annotator"]: r for r in quality["annotators"]}
    assert quality["flag_min_gold"] == stats_quality.MIN_GOLD_FOR_FLAG == 5
    assert (rows["bob"]["gold_accuracy"], rows["bob"]["gold_solutions"], rows["bob"]["below_threshold"]) == (
        0.5,
        1,
        False,
    )
    assert rows["cy"]["below_threshold"]  # failed screening still is
