"""A tiny Hugging Face model, tokenizer and CPU training arguments for the TRL consumer tests: built
here from the export's own text, so nothing is downloaded (callers set HF_HUB_OFFLINE first)."""

import transformers


def tokenizer_for(texts: list[str]):
    """A byte-level BPE trained on the export's own text: every character, "\\n" included, encodes."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<pad>", "<s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", bos_token="<s>")


def tiny_bert(model_class, tokenizer, num_labels: int):
    """A one-layer BERT of `model_class` (token or sequence classification) over the tokenizer's vocabulary."""
    config = transformers.BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=num_labels,
        pad_token_id=tokenizer.pad_token_id,
    )
    return model_class(config)


def cpu_args(config_class, out_dir: str, **overrides):
    """TRL training arguments for a few CPU steps: no bf16, no saving, no reporting, no workers."""
    kw = {
        "output_dir": out_dir,
        "learning_rate": 1e-3,
        "max_length": 512,
        "bf16": False,
        "use_cpu": True,
        "report_to": [],
        "save_strategy": "no",
        "logging_steps": 1,
        "disable_tqdm": True,
        "dataloader_num_workers": 0,
    }
    return config_class(**{**kw, **overrides})
