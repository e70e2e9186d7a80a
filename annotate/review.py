"""A labeled solution as a lead reviews it in the admin: each step with its type, its text (code
with line numbers), the annotator's rating, flag and critique, the first error marked."""

from __future__ import annotations

import json

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from annotate.models import Annotation, ContentKind, Step
from prm800k.kinds import line_ranges
from prm800k.labels import main_line_completion

RATING_NAMES = {1: "+1 Positive", 0: "0 Neutral", -1: "−1 Negative", None: "not rated"}


def review_table(annotation: Annotation) -> SafeString:
    steps = list(
        Step.objects.filter(solution_id=annotation.solution_id).order_by("index").values_list("text", "step_type")
    )
    problem = annotation.solution.problem
    texts = [text for text, _ in steps]
    lines = line_ranges(texts) if problem.kind == ContentKind.CODE else None
    labels = json.loads(annotation.label_steps)
    rows = []
    for index, (text, step_type) in enumerate(steps):
        main = main_line_completion(labels[index]) if index < len(labels) else None
        rating = main.get("rating") if main else None
        where = f"lines {lines[index][0]}–{lines[index][1]}" if lines else ""
        rows.append(
            (
                "background:#ffebe9" if index == annotation.first_error_index else "",
                index + 1,  # from 1, as the workspace, the dashboard and the side-by-side number steps
                step_type or problem.kind,
                where,
                text,
                RATING_NAMES.get(rating, str(rating)) if main else "—",
                "flagged" if main and main.get("flagged") else "",
                (main or {}).get("critique") or "",
            )
        )
    body = format_html_join(
        "",
        '<tr style="{}"><td>{}</td><td>{}<br><small>{}</small></td><td><pre style="white-space:pre-wrap;margin:0">{}'
        "</pre></td><td>{}</td><td>{}</td><td>{}</td></tr>",
        rows,
    )
    language = f" ({problem.language})" if problem.language else ""
    return format_html(
        '<table class="sl-review"><caption>{}{}: the first error is shaded</caption>'
        "<thead><tr><th>step</th><th>type</th><th>text</th><th>rating</th><th>flag</th><th>critique</th></tr></thead>"
        "<tbody>{}</tbody></table>",
        problem.kind,
        language,
        body,
    )


def first_critique(label_steps: str) -> str:
    """The first critique written in a label (for the annotation list), or ""."""
    for step in json.loads(label_steps):
        main = main_line_completion(step)
        if main and main.get("critique"):
            return main["critique"]
    return ""
