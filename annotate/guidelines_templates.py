"""Starting guidelines for the three kinds of solutions (issue 18), offered when a lead creates a
project: Markdown the lead edits before annotators see it."""

MATH = """# How to rate each step

Read the problem, then rate the solution one step at a time.

- **Positive (3)**: the step is correct and moves towards the answer.
- **Neutral (2)**: correct but unhelpful, or ambiguous (a restatement, a guess that happens to be true).
- **Negative (1)**: the step is wrong: an arithmetic or algebra slip, a false claim, an unjustified leap,
  e.g. $2 + 2 = 5$. The first wrong step is what we need: in most projects a Negative ends the solution
  there; where you are offered other versions of a step (phase 1), choose or write a right one and go on.

Press **e** after rating to say in a sentence what is wrong (or right) with the step.
Flag (**f**) a rating you are unsure of. Report a bad problem (**b**) when the problem itself is
unanswerable, and give up (**g**) when you cannot tell.
"""

CODE = """# How to rate each step of code

The problem is a specification; the **tests** under it are examples of what the function must do.
Each step is a few lines of the solution; line numbers count across the whole solution.

- **Positive (3)**: the lines are correct and needed: with the lines before them they still meet the specification.
- **Neutral (2)**: harmless but not needed (a comment, an unused variable, a debug print).
- **Negative (1)**: the first lines where the code leaves the specification: a wrong condition or bound
  (`<` for `<=`, `range(1, n)` for `range(1, n + 1)`), a wrong formula, a case the tests or the
  specification cover that these lines get wrong, code that cannot run (a syntax error, an undefined name).
  Judge the step by what it does, not by style: a slow but correct step is Positive.

After a Negative, press **e** and write the critique: what the lines do, what the specification needs,
and, if you can, the fix (for example "`values[1]` is the second smallest; the second largest is `values[-2]`").
"""

TRACE = """# How to rate each step of an agent's trace

The agent works on the task in steps: **thoughts**, **tool calls** (the tool's name and its arguments,
shown as code) and the tool's **observations** (collapsed: click to read them), then an **answer**.
Observations are the tools' output, shown for context and not rated, unless the project rates them.

- **Positive (3)**: a sound thought, or a tool call with the right tool and arguments that moves the task on;
  an answer that follows from the observations and answers the task.
- **Neutral (2)**: correct but not useful (a repeated call, a thought that adds nothing).
- **Negative (1)**: the first step that goes wrong: a thought that misreads an observation, a call with the
  wrong tool or wrong arguments, an answer the observations do not support.

After a Negative, press **e** and write the critique: which observation or argument shows the mistake.
"""

COMPARE = """# How to compare two solutions

Read the problem, then both solutions, **A** (left) and **B** (right). Say which is better, by how much,
and, in each solution that goes wrong, where it first does.

- **A is better (a or ←) / B is better (b or →)**: the better solution reaches the right answer, or
  goes wrong later, or makes a smaller mistake. Correct reasoning beats a lucky right answer.
- **Tie (t)**: both are equally good, or equally bad.
- **How much (1 slightly, 2 clearly, 3 much)**: how sure a careful reader would be.
- **First wrong step (q for A, p for B)**: move the marker to the first step that is wrong; leave it off
  a solution with no wrong step. In an agent's trace the tool's observations are context, not steps to
  mark: the marker passes over them (a misread observation is the fault of the thought or answer after it).

Which side a solution is shown on is drawn at random: judge the content, not the position.
"""

TEMPLATES = {"math": MATH, "code": CODE, "trace": TRACE}
# A compare project's starting guidelines: the step templates describe rating steps, not pairs.
COMPARE_TEMPLATE_KIND = "compare"
ALL_TEMPLATES = {**TEMPLATES, COMPARE_TEMPLATE_KIND: COMPARE}


def starting_guidelines(*, text: str, content_kind: str, task_kind: str) -> str:
    """The guidelines a new project starts with: the lead's own text, else the template of its
    kind. A compare project left with an untouched step template gets the compare one (the step
    templates' keys mean other things there: 1-3 is how much better)."""
    compare = task_kind == COMPARE_TEMPLATE_KIND
    if not text.strip() or (compare and text.strip() in {t.strip() for t in TEMPLATES.values()}):
        return COMPARE if compare else TEMPLATES.get(content_kind or "math", MATH)
    return text


CHOICES = [("math", "Math (Markdown + LaTeX)"), ("code", "Code"), ("trace", "Agent traces")]
