"""The TRL export as its consumer reads it: `datasets` loads the streamed JSONL and TRL's PRMTrainer
trains on it, with a tiny model and tokenizer built here (no downloads, CPU, bf16 off).

PRMTrainer left TRL after 1.13.0 (it lives in `trl.experimental.prm` there); requirements-dev.txt
pins trl==1.13.0 and datasets==5.2.0, the versions the README names as tested consumers.
"""

import io
import json
import math
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may be fetched: the model is built below
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # PRMTrainer lives in trl.experimental in 1.13.0

import datasets  # noqa: E402  (after the offline switches, which these read on import)
import pytest  # noqa: E402
import transformers  # noqa: E402
from django.core.management import call_command  # noqa: E402
from trl.experimental import prm as trl_prm  # noqa: E402

from annotate.models import Project, Role  # noqa: E402
from tests.api_clients import member_client  # noqa: E402
from tests.labeling_api.exports.helpers import NEUTRAL_THEN_ERROR  # noqa: E402
from tests.ml.tiny_hf import cpu_args, tiny_bert, tokenizer_for  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "annotate", "fixtures")


@pytest.mark.django_db
def test_trl_export_loads_with_datasets_and_trains_prm_trainer(tmp_path):
    call_command(
        "import_prm800k", f"{FIXTURES}/edge_cases.jsonl", project="trl", no_progress=True, stdout=io.StringIO()
    )
    extra = tmp_path / "neutral.jsonl"
    extra.write_text(json.dumps(NEUTRAL_THEN_ERROR) + "\n")
    call_command("import_prm800k", str(extra), project="trl", no_progress=True, stdout=io.StringIO())
    ml = member_client(Project.objects.get(slug="trl"), "ml-trl", Role.ML_ENGINEER)
    response = ml.get("/api/v1/projects/trl/export/?format=trl&neutral=negative&alternatives=branch")
    assert response.status_code == 200
    export = tmp_path / "trl.jsonl"
    export.write_bytes(b"".join(response.streaming_content))

    dataset = datasets.load_dataset("json", data_files=str(export), split="train", cache_dir=str(tmp_path / "cache"))
    assert set(dataset.column_names) == {"prompt", "completions", "labels"}
    assert dataset.features["labels"].feature.dtype == "bool"
    rows = dataset.to_list()
    assert {"prompt": "What is $2+2$?", "completions": ["a", "b", "c"], "labels": [True, False, False]} in rows
    assert {"prompt": "What is $2+2$?", "completions": ["a", "b", "c2"], "labels": [True, False, True]} in rows

    tokenizer = tokenizer_for([row["prompt"] for row in rows] + [text for row in rows for text in row["completions"]])
    model = tiny_bert(transformers.BertForTokenClassification, tokenizer, num_labels=2)
    args = cpu_args(trl_prm.PRMConfig, str(tmp_path / "out"), max_steps=3, per_device_train_batch_size=4)
    trainer = trl_prm.PRMTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
    # Every exported step label reached a token: the separator after each step carries it.
    first = trainer.train_dataset[0]
    assert sum(label != -100 for label in first["labels"]) == len(rows[0]["labels"])
    result = trainer.train()
    assert trainer.state.global_step == 3 and math.isfinite(result.training_loss)
