"""The README's incremental Python pull, run as written against a live server, then loaded with
`datasets` as the README's next block says: a run with nothing new must leave a loadable training
file (the README once loaded new_rows.jsonl, which is empty then, and `datasets` fails on it with
a bare StopIteration)."""

import io
import json
import os
import re
from pathlib import Path

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import datasets  # noqa: E402
import pytest  # noqa: E402
from django.core.management import call_command  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from annotate.models import Project, Role  # noqa: E402
from tests.api_clients import member_client  # noqa: E402
from tests.labeling_api.exports.helpers import NEUTRAL_THEN_ERROR  # noqa: E402

README = Path(__file__).resolve().parents[2] / "README.md"
FIXTURES = Path(__file__).resolve().parents[1] / "annotate" / "fixtures"


def _readme_block(after: str) -> str:
    text = README.read_text()
    return re.search(r"```python\n(.*?)```", text[text.index(after) :], re.S).group(1)


def _import(path: Path) -> None:
    call_command("import_prm800k", str(path), project="math", no_progress=True, stdout=io.StringIO())


@pytest.mark.django_db(transaction=True)
def test_readme_incremental_pull_appends_new_rows_and_loads_after_a_run_with_nothing_new(
    live_server, tmp_path, monkeypatch
):
    _import(FIXTURES / "edge_cases.jsonl")
    ml = member_client(Project.objects.get(slug="math"), "ml", Role.ML_ENGINEER).user
    token = Token.objects.get(user=ml).key
    pull = _readme_block("**Python, incremental**").replace(
        '"http://127.0.0.1:8000/api/v1", "..."', f'"{live_server.url}/api/v1", "{token}"'
    )
    load = next(line for line in _readme_block("**Load with Hugging Face").splitlines() if "load_dataset(" in line)
    monkeypatch.chdir(tmp_path)

    def run_and_load() -> list[dict]:
        exec(pull, {})  # noqa: S102  (the README's own code)
        scope: dict = {}
        exec(f"from datasets import load_dataset\n{load}", scope)  # noqa: S102
        assert isinstance(scope["ds"], datasets.Dataset)
        return scope["ds"].to_list()

    first = run_and_load()
    assert first and set(first[0]) == {"prompt", "completions", "labels"}
    assert run_and_load() == first  # nothing new: new_rows.jsonl is empty, the training file loads
    assert (tmp_path / "new_rows.jsonl").read_bytes() == b""

    extra = tmp_path / "more.jsonl"
    extra.write_text(json.dumps(NEUTRAL_THEN_ERROR) + "\n")
    _import(extra)
    third = run_and_load()
    assert third[: len(first)] == first
    # The new record only (neutral as positive; its rated alternative branches into a row of its own).
    assert third[len(first) :] == [
        {"prompt": "What is $2+2$?", "completions": ["a", "b", "c"], "labels": [True, True, False]},
        {"prompt": "What is $2+2$?", "completions": ["a", "b", "c2"], "labels": [True, True, True]},
    ]

    # A label deleted after it was pulled: the README's pull stops before it moves the cursor, and a
    # full pull (cursor.txt and rows.jsonl removed, as it says) no longer holds the label's rows.
    from annotate.models import Annotation

    cursor = (tmp_path / "cursor.txt").read_text()
    Annotation.objects.filter(project__slug="math").order_by("-id").first().delete()  # the record added last
    with pytest.raises(SystemExit, match="labels were deleted"):
        run_and_load()
    assert (tmp_path / "cursor.txt").read_text() == cursor
    (tmp_path / "cursor.txt").unlink()
    (tmp_path / "rows.jsonl").unlink()
    assert run_and_load() == first

    # A label corrected after it was pulled (a lead marks it gold) comes again in the next pull: the
    # README's pull stops rather than append its rows beside the old ones (a duplicate in training).
    from annotate.services import audit

    cursor = (tmp_path / "cursor.txt").read_text()
    first_label = Annotation.objects.filter(project__slug="math").order_by("id").first()
    audit.mark_gold(annotations=Annotation.objects.filter(pk=first_label.pk), user=None, reason="gold")
    with pytest.raises(SystemExit, match="labels were corrected"):
        run_and_load()
    assert (tmp_path / "cursor.txt").read_text() == cursor
    (tmp_path / "cursor.txt").unlink()
    (tmp_path / "rows.jsonl").unlink()
    rebuilt = run_and_load()
    assert sorted(map(str, rebuilt)) == sorted(map(str, first))  # the same rows, none twice
