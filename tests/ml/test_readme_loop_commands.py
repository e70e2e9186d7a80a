"""README "Active learning": its commands run as written. `train_base_prm --data
prm800k/phase2_train.jsonl` named a file that exists nowhere (prm800k/ is the package; the shared
file is phase2_train.reconstructed.jsonl); found walking the ML engineer's path."""

import re
import shlex
from pathlib import Path

from ml.prm.data import DATA, DATASETS

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    return text[text.index("## Active learning") : text.index("## Dashboard for leads")]


def test_train_base_prm_in_the_readme_names_data_that_exists():
    lines = [line for line in _section().splitlines() if "manage.py train_base_prm" in line]
    assert lines, "README's Active learning no longer shows train_base_prm"
    for line in lines:
        words = shlex.split(line.split("#")[0])
        for flag, value in zip(words, words[1:], strict=False):
            if flag == "--dataset":
                assert value in DATASETS, line
            if flag == "--data":  # a path from the repository root, or the shared data folder
                shared = value.startswith("../shared/data/")
                path = DATA / value.removeprefix("../shared/data/") if shared else ROOT / value
                assert shared or path.exists(), f"{value} does not exist: {line}"
                assert not shared or not DATA.exists() or path.exists(), f"{value} does not exist: {line}"


def test_the_readmes_simulation_examples_keep_the_shipped_page():
    """A trial with the default --results is refused now; the examples must say where they write."""
    block = re.search(r"```sh\n(\.venv/bin/python manage\.py simulate_active_learning.*?)```", _section(), re.S)
    assert block
    commands = block.group(1).replace("\\\n", " ").splitlines()
    for command in commands:
        if "..." not in command:
            assert "--results" in command and "--results bench/results" not in command, command


def test_the_readme_says_retrain_now_without_new_labels_trains_nothing():
    """Was: "A retrain asked for after the rollback (Retrain now, the API, ...) replaces the model as
    usual", while the API answers the active run and trains nothing until a label arrives
    (tests/labeling_api/test_ml_api.py::test_retrain_now_with_no_label_since_the_active_run_answers_that_run)."""
    section = " ".join(_section().split())
    assert "no label has arrived since the active model's run started trains nothing" in section
    assert "before that they answer with it and train nothing" in section
    assert "replaces the model as usual" in section


def test_the_readme_says_what_a_bad_ml_training_config_does():
    """ML_TRAINING_CONFIG that is not a JSON object now stops at start (config/settings/base.py)."""
    section = " ".join(_section().split())
    assert "anything else stops every command and the server at start with an error naming it" in section
    assert "(did you mean max_epochs?)" in section
