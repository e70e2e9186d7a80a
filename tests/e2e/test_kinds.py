"""Code and agent-trace solutions in real Chromium (issue 18): labeled with the keyboard, the first
wrong step critiqued, then read back from the PRM800K and critique exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Role
from annotate.services.imports import import_file
from tests.api_clients import member_client
from tests.e2e.helpers import (
    annotation_for,
    current_step,
    label_steps,
    login,
    make_project,
    make_user,
    open_workspace,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CODE = {
    "kind": "code",
    "language": "python",
    "problem": "Write `second_largest(xs)`: the second largest distinct value of a list with at least two.",
    "tests": "assert second_largest([3, 1, 4, 4]) == 3\nassert second_largest([2, 1]) == 1",
    "steps": [
        "def second_largest(xs):\n    # distinct values, largest first",
        "    values = sorted(set(xs))",
        "    return values[1]",
    ],
}
TRACE = {
    "kind": "trace",
    "problem": "How many days are there between 2024-02-27 and 2024-03-02?",
    "ground_truth_answer": "4",
    "steps": [
        {"type": "thought", "text": "I will count with the calendar tool rather than by hand."},
        {"type": "tool_call", "text": 'days_between({"start": "2024-02-27", "end": "2024-03-02"})'},
        {"type": "observation", "text": '{"days": 4}\n(2024 is a leap year: February has 29 days)'},
        {"type": "answer", "text": "There are **3** days between them."},
    ],
}


def _import(project, tmp_path: Path, line: dict) -> None:
    path = tmp_path / "line.jsonl"
    path.write_text(json.dumps(line) + "\n")
    import_file(project=project, path=path)


def _export(project, fmt: str) -> list[dict]:
    response = member_client(project, f"ml-{fmt}", Role.ML_ENGINEER).get(
        f"/api/v1/projects/{project.slug}/export/?format={fmt}"
    )
    assert response.status_code == 200
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]


def test_code_solution_labeled_with_keyboard_and_critique(pages, screenshot, tmp_path):
    project = make_project("code", name="Python functions", critique_required=True)
    make_user("ann", project)
    _import(project, tmp_path, CODE)
    page = pages.page()
    open_workspace(page, "ann", slug="code")

    # Highlighted code with line numbers counted across steps; the tests are shown as the specification.
    expect(page.locator(".sl-tests .sl-code .hljs-keyword").first).to_have_text("assert")
    step1 = page.locator(".sl-step").nth(0)
    expect(step1.locator(".sl-gutter")).to_have_text("1\n2")
    expect(step1.locator(".hljs-keyword").first).to_have_text("def")
    page.keyboard.press("3")
    page.keyboard.press("3")
    expect(page.locator(".sl-step").nth(2).locator(".sl-gutter")).to_have_text("4")
    page.keyboard.press("1")
    expect(current_step(page)).to_have_class("sl-step sl-current sl-error")
    # The project needs a critique of the Negative step: submit waits for it.
    expect(page.get_by_role("button", name="Submit")).to_be_disabled()
    expect(page.locator(".sl-footer")).to_contain_text("needs your critique")
    screenshot(page, "kinds-code-needs-critique")
    page.keyboard.press("Enter")  # too early: refused, and said
    expect(page.locator(".sl-notice")).to_contain_text("Not ready to submit: step 3 is Negative")
    page.keyboard.press("e")
    box = page.get_by_label("Critique of step 3")
    expect(box).to_be_focused()
    critique = "values[1] is the second smallest: sorted() is ascending, so it should be values[-2]."
    page.keyboard.type(critique)
    page.keyboard.press("Enter")
    expect(current_step(page).locator(".sl-critique-text")).to_have_text(critique)
    expect(page.get_by_role("button", name="Submit")).to_be_enabled()
    expect(page.locator(".sl-notice")).not_to_contain_text("Not ready")  # it described the labels before
    # A corrected step is drawn as code, its lines and indentation as typed (it read as one line of prose).
    page.keyboard.press("c")
    fixed = page.locator("#sl-human-2")
    expect(fixed).to_be_focused()
    fixed.fill("    ordered = sorted(values)\n    return ordered[-2]")
    fixed.press("Enter")
    expect(current_step(page).locator(".sl-written-code .sl-code-body")).to_have_text(
        "    ordered = sorted(values)\n    return ordered[-2]"
    )
    screenshot(page, "kinds-code-critique-written", full_page=True)
    # The critique is in the draft: a reload brings it back.
    page.reload()
    expect(page.locator(".sl-step.sl-current .sl-critique-text")).to_have_text(critique)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="No more solutions to label right now")).to_be_visible()

    [record] = _export(project, "prm800k")
    assert (record["question"]["kind"], record["question"]["language"]) == ("code", "python")
    assert [s["completions"][0]["rating"] for s in record["label"]["steps"]] == [1, 1, -1]
    assert record["label"]["steps"][2]["completions"][0]["critique"] == critique
    fixed_text = record["label"]["steps"][2]["human_completion"]["text"]
    assert fixed_text == "    ordered = sorted(values)\n    return ordered[-2]"
    assert "critique" not in record["label"]["steps"][0]["completions"][0]
    [row] = _export(project, "critique")
    assert row["verdicts"][-1] == {"index": 2, "rating": -1, "critique": critique, "lines": [4, 4]}
    assert row["steps"] == CODE["steps"] and row["language"] == "python"


def test_trace_with_tool_call_labeled_with_keyboard_and_critique(pages, screenshot, tmp_path):
    project = make_project("agents", name="Agent traces")
    make_user("ann", project)
    _import(project, tmp_path, TRACE)
    page = pages.page()
    open_workspace(page, "ann", slug="agents")

    steps = page.locator(".sl-step")
    expect(steps.nth(0).locator(".sl-step-type")).to_have_text("Thought")
    page.keyboard.press("3")
    tool = steps.nth(1)
    expect(tool.locator(".sl-step-type")).to_have_text("Tool call")
    expect(tool.locator(".sl-tool-name")).to_have_text("days_between")
    expect(tool.locator(".sl-code .hljs-attr").first).to_have_text('"start"')
    page.keyboard.press("3")
    # The observation is shown, collapsed and unrated; the answer step is next to rate.
    observation = steps.nth(2)
    expect(observation.locator(".sl-step-status")).to_have_text("shown, not rated")
    expect(observation.locator("details.sl-observation")).not_to_have_attribute("open", "")
    expect(observation.locator(".sl-rate-group")).to_be_hidden()
    expect(current_step(page)).to_contain_text("Step 4")
    screenshot(page, "kinds-trace-observation-collapsed", full_page=True)
    expect(observation.locator("summary")).to_have_text("Tool output · 2 lines (click to open)", use_inner_text=True)
    observation.locator("summary").click()
    expect(observation.locator(".sl-observation-text")).to_be_visible()
    expect(observation.locator("summary")).to_have_text("Tool output · 2 lines (click to close)", use_inner_text=True)
    page.keyboard.press("1")
    page.keyboard.press("e")
    page.keyboard.type("The tool said 4 days; the answer says 3.")
    page.keyboard.press("Enter")
    screenshot(page, "kinds-trace-critique", full_page=True)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="No more solutions to label right now")).to_be_visible()

    solution = project.solutions.get()
    labels = label_steps(annotation_for(solution))
    assert [s["completions"][0]["rating"] for s in labels] == [1, 1, None, -1]
    [record] = _export(project, "prm800k")
    assert record["question"]["step_types"] == ["thought", "tool_call", "observation", "answer"]
    assert record["label"]["steps"][3]["completions"][0]["critique"] == "The tool said 4 days; the answer says 3."
    [row] = _export(project, "critique")
    assert row["steps"][1] == TRACE["steps"][1] and row["kind"] == "trace"
    assert row["verdicts"] == [
        {"index": 0, "rating": 1, "critique": None},
        {"index": 1, "rating": 1, "critique": None},
        {"index": 3, "rating": -1, "critique": "The tool said 4 days; the answer says 3."},
    ]

    # The lead's dashboard counts the three rated steps, not the observation shown beside them.
    make_user("lena", project, Role.LEAD)
    lead = pages.page()
    login(lead, "lena", "/dashboard/agents/")
    rated = lead.locator("[data-slot=labels-figures] .sl-figure").filter(has_text="steps rated")
    expect(rated.locator(".sl-figure-value")).to_have_text("3")
    expect(rated.locator(".sl-figure-note")).to_have_text("1 more shown without a rating")
