"""The preference export as its consumer reads it: `datasets` loads the streamed rows and TRL's
RewardTrainer (trl 1.13.0, pinned in requirements-dev.txt) trains on them as they are, with a tiny
sequence-classification model and tokenizer built here (no downloads, CPU). Checks that the explicit
prompt is prepended to both sides (hence the export's newline after it) and that `margin` reaches
the loss."""

import json
import math
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import datasets  # noqa: E402
import pytest  # noqa: E402
import transformers  # noqa: E402
import trl  # noqa: E402
from django.core.management import call_command  # noqa: E402

from annotate.models import Project, Role  # noqa: E402
from tests.api_clients import member_client  # noqa: E402
from tests.compare_lines import LINES  # noqa: E402
from tests.ml.tiny_hf import cpu_args, tiny_bert, tokenizer_for  # noqa: E402


@pytest.mark.django_db
def test_preference_export_trains_trls_reward_trainer_as_it_is(tmp_path):
    assert trl.__version__ == "1.13.0"
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    call_command("import_prm800k", str(path), "--project", "rm", "--task", "compare", "--pairs-per-problem", "2")
    project = Project.objects.get(slug="rm")
    annotator = member_client(project, "rm-ann", Role.ANNOTATOR)
    task = annotator.get("/api/v1/projects/rm/tasks/next/").json()
    for key, (preference, strength) in enumerate([("A", 3), ("B", 1), ("A", 2)]):
        response = annotator.post(
            f"/api/v1/assignments/{task['assignment_id']}/submit/",
            {"idempotency_key": f"k{key}", "preference": preference, "strength": strength, "total_time_ms": 10},
            format="json",
        )
        assert response.status_code == 201, response.content
        task = response.json()["next"]
    ml = member_client(project, "rm-ml", Role.ML_ENGINEER)
    response = ml.get("/api/v1/projects/rm/export/?format=preference")
    export = tmp_path / "prefs.jsonl"
    export.write_bytes(b"".join(response.streaming_content))

    dataset = datasets.load_dataset("json", data_files=str(export), split="train", cache_dir=str(tmp_path / "c"))
    rows = dataset.to_list()
    assert len(rows) == 3 and sorted(row["margin"] for row in rows) == [1.0, 2.0, 3.0]
    tokenizer = tokenizer_for([row[k] for row in rows for k in ("prompt", "chosen", "rejected")])
    tokenizer.eos_token = "<s>"
    model = tiny_bert(transformers.BertForSequenceClassification, tokenizer, num_labels=1)
    args = cpu_args(trl.RewardConfig, str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=2)
    trainer = trl.RewardTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
    first, prepared = rows[0], trainer.train_dataset[0]
    # The explicit prompt goes in front of both sides, then an end token.
    assert tokenizer.decode(prepared["chosen_ids"]) == first["prompt"] + first["chosen"] + "<s>"
    assert tokenizer.decode(prepared["rejected_ids"]) == first["prompt"] + first["rejected"] + "<s>"
    assert prepared["margin"] == first["margin"]
    result = trainer.train()
    assert trainer.state.global_step == 2 and math.isfinite(result.training_loss)
