"""TRL stepwise-supervision rows ({prompt, completions, labels}) from PRM800K records."""

from __future__ import annotations

from typing import Any

from prm800k.labels import walked_step


def trl_rows(record: dict[str, Any], *, neutral: str = "positive", alternatives: str = "branch") -> list[dict]:
    """TRL stepwise-supervision rows {prompt, completions, labels} from one PRM800K record.

    The main row follows the solution as prm800k.labels.walked_step reads it: at each step the
    chosen completion, else the human step (labeled True, as TRL's converter does), else the first
    completion (the pre-generated step a phase-2 labeler rated -1, which ends the row). With
    alternatives=branch every other rated completion becomes its own row: the main-line prefix plus
    that completion. Rows end at the first step *rated* -1; a neutral mapped to False by
    neutral=negative does not end them (the labeler went on past it). neutral=drop ends the main
    row before a neutral step and skips neutral alternatives; unrated steps end rows, except a
    trace's observations shown but not rated (`question.step_types`): their text opens the next
    step's completion, so the rows go on.
    """
    prompt = record["question"]["problem"]
    step_types = record["question"].get("step_types") or []
    context = ""  # unrated observations waiting for the next step

    def label_of(rating: Any) -> bool | None:
        if rating == 1:
            return True
        if rating == -1:
            return False
        if rating == 0:
            return None if neutral == "drop" else neutral == "positive"
        return None

    rows: list[dict] = []
    texts: list[str] = []
    labels: list[bool] = []
    for position, step in enumerate(record["label"]["steps"]):
        walked = walked_step(step)
        if walked is None:
            break
        main_index, main = walked
        completions = step.get("completions") or []
        main_text = main["text"]
        main_rating = 1 if main.get("human") else main.get("rating")  # the labeler's own step is right
        step_type = step_types[position] if position < len(step_types) else ""
        chosen = main_index is not None and main_index == step.get("chosen_completion")
        if step_type == "observation" and main_rating is None and chosen:
            context += main_text + "\n\n"
            continue
        main_text = context + main_text
        main_label = label_of(main_rating)
        if alternatives == "branch":
            for index, completion in enumerate(completions):
                alt_label = label_of(completion.get("rating"))
                if index != main_index and alt_label is not None:
                    alt_text = context + completion["text"]
                    rows.append({"prompt": prompt, "completions": [*texts, alt_text], "labels": [*labels, alt_label]})
        if main_label is None:
            break
        texts.append(main_text)
        labels.append(main_label)
        context = ""
        if main_rating == -1:
            break  # PRM800K stops at the first step rated -1, not at a neutral mapped to False
    if texts:
        rows.insert(0, {"prompt": prompt, "completions": texts, "labels": labels})
    return rows
