"""A Math-Shepherd line (GSM8K) in the workspace, real Chromium: its products written with `*` and its
calculator notes <<a*b=c>> show as written, not half in italics with the `*` gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.services.imports import import_file
from tests.e2e.helpers import current_step, make_project, make_user, open_workspace

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TAG = "ки"
QUESTION = "Running for 2 hours, Jonah burnt 30 calories every hour. How many more calories would he burn in 5 hours?"
STEPS = [
    "Jonah would have burnt 30*5=<<30*5=150>>150 calories in five hours.",
    "So 150-60=<<150-60=90>>90 more. The answer is: 90",
]


def test_a_gsm8k_product_shows_its_star(pages, screenshot, tmp_path: Path) -> None:
    project = make_project("shepherd", name="Math-Shepherd check")
    make_user("ann", project)
    text = QUESTION + " " + "\n".join(f"Step {i + 1}: {s} {TAG}" for i, s in enumerate(STEPS))
    label = QUESTION + " " + "\n".join(f"Step {i + 1}: {s} +" for i, s in enumerate(STEPS))
    path = tmp_path / "shepherd.jsonl"
    path.write_text(json.dumps({"input": text, "label": label, "task": "GSM8K"}) + "\n")
    import_file(project=project, path=path)

    page = pages.page()
    open_workspace(page, "ann", slug="shepherd")
    step = current_step(page)
    expect(step).to_contain_text("30*5=<<30*5=150>>150 calories")
    expect(step.locator(".sl-step-text em")).to_have_count(0)
    screenshot(page, "shepherd-products")


def test_a_tool_calls_numbers_show_as_the_agent_wrote_them(pages, tmp_path: Path) -> None:
    """Pretty-printed through JSON.parse, an order id past 2^53 showed one off and 2.50 as 2.5."""
    project = make_project("orders", name="Agent traces")
    make_user("ann", project)
    trace = {
        "kind": "trace",
        "problem": "Refund order 9007199254740993.",
        "ground_truth_answer": "refunded",
        "steps": [
            {"type": "tool_call", "text": 'refund({"order_id": 9007199254740993, "amount": 2.50})'},
            {"type": "answer", "text": "refunded"},
        ],
    }
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps(trace) + "\n")
    import_file(project=project, path=path)

    page = pages.page()
    open_workspace(page, "ann", slug="orders")
    code = current_step(page).locator(".sl-code-body")
    expect(code).to_have_text('{\n  "order_id": 9007199254740993,\n  "amount": 2.50\n}')
