"""Feature rows: a small CSR/dense container that supports row gathers, featurizing in chunks, and
the per-process cache that keeps rows by step key (a step is featurized once)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
import torch

from ml.prm.examples import step_key
from ml.prm.featurizers import Featurizer, as_inputs


class Rows:
    """Feature rows, either CSR (indptr, indices, values) or dense, with a fast row gather."""

    def __init__(self, *, dim: int, indptr=None, indices=None, values=None, dense=None, side=None):
        self.dim = dim
        self.indptr, self.indices, self.values, self.dense = indptr, indices, values, dense
        # dense side columns per row that the head takes apart from the features (the graded
        # answer, `ml.prm.answer_input`); None when there are none
        self.side: np.ndarray | None = side
        self._scipy: sp.csr_matrix | None = None

    @property
    def sparse(self) -> bool:
        return self.dense is None

    def __len__(self) -> int:
        return len(self.indptr) - 1 if self.sparse else len(self.dense)

    @classmethod
    def from_tensor(cls, t: torch.Tensor) -> Rows:
        if t.layout == torch.sparse_csr:
            return cls(
                dim=t.shape[1],
                indptr=t.crow_indices().numpy().astype(np.int64),
                indices=t.col_indices().numpy().astype(np.int32),
                values=t.values().numpy().astype(np.float32),
            )
        return cls(dim=t.shape[1], dense=t.detach().float().cpu().numpy())

    def with_side(self, side: np.ndarray | None) -> Rows:
        """These rows (the same arrays) with `side` columns."""
        out = Rows(dim=self.dim, indptr=self.indptr, indices=self.indices, values=self.values, dense=self.dense)
        out.side, out._scipy = side, self._scipy
        return out

    @classmethod
    def concat(cls, parts: list[Rows]) -> Rows:
        side = np.concatenate([p.side for p in parts]) if all(p.side is not None for p in parts) else None
        return cls._concat(parts).with_side(side)

    @classmethod
    def _concat(cls, parts: list[Rows]) -> Rows:
        if parts[0].sparse:
            offs = np.cumsum([0] + [p.indptr[-1] for p in parts[:-1]])
            indptr = np.concatenate(
                [parts[0].indptr[:1]] + [p.indptr[1:] + o for p, o in zip(parts, offs, strict=True)]
            )
            return cls(
                dim=parts[0].dim,
                indptr=indptr,
                indices=np.concatenate([p.indices for p in parts]),
                values=np.concatenate([p.values for p in parts]),
            )
        return cls(dim=parts[0].dim, dense=np.concatenate([p.dense for p in parts]))

    def take(self, idx, *, view: bool = False) -> Rows:
        """Rows `idx`, a copy; `view=True` lets a run of rows come back as views of these arrays
        (for a caller that copies them anyway, as `concat` does)."""
        idx = np.asarray(idx, dtype=np.int64)
        if len(idx) and idx[-1] - idx[0] == len(idx) - 1 and (len(idx) == 1 or (np.diff(idx) == 1).all()):
            return self._slice(int(idx[0]), int(idx[-1]) + 1, copy=not view)  # a run of rows: no gather
        out = self._gather(idx)
        out.side = None if self.side is None else self.side[idx]
        return out

    def _gather(self, idx: np.ndarray) -> Rows:
        if not self.sparse:
            return Rows(dim=self.dim, dense=self.dense[idx])
        sub = self.scipy()[idx]  # scipy's row gather (C): no index arrays the size of every value
        return Rows(
            dim=self.dim,
            indptr=sub.indptr.astype(np.int64),
            indices=sub.indices.astype(np.int32, copy=False),
            values=sub.data.astype(np.float32, copy=False),
        )

    def scipy(self) -> sp.csr_matrix:
        """A csr_matrix view of the same arrays, built once per Rows (int32 offsets where they fit,
        so scipy does not copy the column indices up to int64)."""
        if self._scipy is None:
            small = self.indptr[-1] < np.iinfo(np.int32).max
            indptr = self.indptr.astype(np.int32) if small else self.indptr
            indices = self.indices if small else self.indices.astype(np.int64)
            self._scipy = sp.csr_matrix((self.values, indices, indptr), shape=(len(self), self.dim))
        return self._scipy

    def _slice(self, a: int, b: int, copy: bool = True) -> Rows:
        # copies by default: the source may be a read-only memory map of the disk store, and torch
        # wants writable arrays
        keep = np.array if copy else np.asarray
        side = None if self.side is None else keep(self.side[a:b])
        if not self.sparse:
            return Rows(dim=self.dim, dense=keep(self.dense[a:b]), side=side)
        lo, hi = int(self.indptr[a]), int(self.indptr[b])
        indptr = np.array(self.indptr[a : b + 1], dtype=np.int64) - lo
        return Rows(
            dim=self.dim, indptr=indptr, indices=keep(self.indices[lo:hi]), values=keep(self.values[lo:hi]), side=side
        )

    def side_inputs(self, idx=None, device: str = "cpu") -> dict:
        """{"side": tensor} of rows `idx` (all rows when None), or {} without side columns."""
        if self.side is None:
            return {}
        side = self.side if idx is None else self.side[idx]
        return {"side": torch.from_numpy(np.ascontiguousarray(side, dtype=np.float32)).to(device)}

    def training_inputs(self, idx, device: str = "cpu") -> dict:
        """Head inputs for a training batch of rows `idx`: sparse rows go as a CSR matrix with its
        transpose, so the backward pass is one sparse-dense matmul (X^T @ grad). EmbeddingBag's CPU
        backward sorts every index of the batch: 1.7-4.3x slower per batch (bench/results/prm.md).
        A training run feeds fixed batches through `TrainingBatches` instead."""
        if not self.sparse:
            return self.take(idx).torch_inputs(device)
        x = self.scipy()[np.asarray(idx)]
        return {
            "csr": _torch_csr(x, device),
            "csr_t": _torch_csr(x.T.tocsr(), device, np.int32),
            **self.side_inputs(np.asarray(idx), device),
        }

    def torch_inputs(self, device: str = "cpu") -> dict:
        """Inputs for the head: EmbeddingBag (indices, offsets, weights) or a dense matrix."""
        if self.sparse:
            return {
                "indices": torch.from_numpy(self.indices.astype(np.int64)).to(device),
                "offsets": torch.from_numpy(self.indptr[:-1]).to(device),
                "weights": torch.from_numpy(self.values).to(device),
                **self.side_inputs(device=device),
            }
        return {"dense": torch.from_numpy(self.dense).to(device), **self.side_inputs(device=device)}


def _torch_csr(x: sp.csr_matrix, device: str, index_dtype=np.int64) -> torch.Tensor:
    """A torch CSR tensor of `x`. The forward product wants int64 indices (torch's int32 CSR @
    dense was 3.7x slower on CPU); the backward one (X^T @ grad) runs as fast on int32, which halves
    what a kept transpose holds."""
    return _csr_tensor(x.indptr.astype(index_dtype), x.indices.astype(index_dtype), x.data, x.shape, device)


def _csr_tensor(indptr: np.ndarray, indices: np.ndarray, values: np.ndarray, shape, device: str) -> torch.Tensor:
    with warnings.catch_warnings():
        # torch calls CSR tensors beta; the one op used here (CSR @ dense) has been stable for years
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")
        return torch.sparse_csr_tensor(
            torch.from_numpy(indptr),
            torch.from_numpy(indices),
            torch.from_numpy(np.asarray(values, dtype=np.float32)),
            size=tuple(shape),
            check_invariants=False,  # valid CSR rows: built by scipy or sliced from them
        ).to(device)


# Transposed training batches kept across epochs up to this size (8 bytes a stored feature: about
# 210,000 labeled steps of ~300 features); a larger run builds each batch's transpose every epoch.
TRANSPOSES_KEPT_BYTES = 512 * 2**20


class TrainingBatches:
    """Fixed training batches over rows in their stored order (the caller shuffles the rows once);
    each epoch visits them in a new order (`order`). Fixed batches are contiguous: a batch is a
    slice, not a row gather, and a sparse batch's transpose for the backward pass is built once and
    kept (while they fit TRANSPOSES_KEPT_BYTES). At 2,048 rows of ~300 features the gather and the
    transpose were 7 of a training step's 28 ms (bench/bench_loop.py)."""

    def __init__(self, rows: Rows, batch_size: int, device: str = "cpu", keep_bytes: int = TRANSPOSES_KEPT_BYTES):
        self.rows, self.device = rows, device
        n = len(rows)
        self.bounds = [(a, min(a + batch_size, n)) for a in range(0, n, batch_size)]
        self._keep = rows.sparse and int(rows.indptr[-1]) * 8 <= keep_bytes
        self._transposes: dict[int, torch.Tensor] = {}
        # the forward product's int64 column indices, converted once: a batch's CSR is then views
        self._indices = rows.indices.astype(np.int64) if rows.sparse else None

    def __len__(self) -> int:
        return len(self.bounds)

    def order(self, gen: torch.Generator) -> list[int]:
        return torch.randperm(len(self.bounds), generator=gen).tolist()

    def inputs(self, j: int) -> dict:
        """Head inputs for batch j (rows `bounds[j]`), as `Rows.training_inputs` gives them."""
        a, b = self.bounds[j]
        rows = self.rows
        if not rows.sparse:
            return rows._slice(a, b).torch_inputs(self.device)
        x_t = self._transposes.get(j)
        if x_t is None:
            x_t = _torch_csr(rows.scipy()[a:b].T.tocsr(), self.device, np.int32)
            if self._keep:
                self._transposes[j] = x_t
        lo, hi = int(rows.indptr[a]), int(rows.indptr[b])
        indptr = np.asarray(rows.indptr[a : b + 1], dtype=np.int64) - lo
        x = _csr_tensor(indptr, self._indices[lo:hi], rows.values[lo:hi], (b - a, rows.dim), self.device)
        return {"csr": x, "csr_t": x_t, **rows.side_inputs(slice(a, b), self.device)}


def featurize(featurizer: Featurizer, items, chunk: int = 50_000) -> Rows:
    items = as_inputs(items)
    if hasattr(featurizer, "triples"):  # the sparse featurizers give their entries directly
        rows, cols, vals = featurizer.triples(items, chunk=chunk)
        indptr = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(items)), out=indptr[1:])
        return Rows(dim=featurizer.dim, indptr=indptr, indices=cols.astype(np.int32), values=vals)
    parts = [Rows.from_tensor(featurizer.transform(items[i : i + chunk])) for i in range(0, len(items), chunk)]
    return Rows.concat(parts) if parts else Rows(dim=featurizer.dim, dense=np.zeros((0, featurizer.dim), np.float32))


class FeatureCache:
    """Feature rows by step key; steps are immutable, so each is featurized once per featurizer."""

    def __init__(self, featurizer: Featurizer, store=None):
        self.featurizer = featurizer
        self.store = store  # a FeatureStore keyed by feature_store.key_of(step key): misses read it first
        self._index: dict[str, int] = {}
        self._parts: list[Rows] = []
        self._rows: Rows | None = None
        self.computed = 0  # rows featurized so far (a cache hit costs nothing)

    def __len__(self) -> int:
        return len(self._index)

    def _all(self) -> Rows:
        if self._rows is None or len(self._parts) > 1:
            self._rows = Rows.concat(self._parts)
            self._parts = [self._rows]
        return self._rows

    def get(self, items, keys: Sequence[str] | None = None) -> Rows:
        """Rows for `items` (StepExamples or (problem, previous, step) tuples), computing the missing ones."""
        inputs = as_inputs(items)
        if keys is None:
            keys = [step_key(*it) for it in inputs]
        missing: dict[str, int] = {}
        for i, k in enumerate(keys):
            if k not in self._index and k not in missing:
                missing[k] = i
        if missing:
            new = self._fetch(list(missing), [inputs[i] for i in missing.values()])
            base = len(self._index)
            for j, k in enumerate(missing):
                self._index[k] = base + j
            self._parts.append(new)
        idx = np.fromiter((self._index[k] for k in keys), dtype=np.int64, count=len(keys))
        return self._all().take(idx)

    def _fetch(self, keys: list[str], inputs: list) -> Rows:
        """Rows for keys not in memory: from the disk store where it has them, else featurized
        (and stored). `computed` counts the featurized ones."""
        if self.store is None:
            self.computed += len(keys)
            return featurize(self.featurizer, inputs)
        from ml.prm.feature_store import key_of

        def compute(missing: np.ndarray) -> Rows:
            return featurize(self.featurizer, [inputs[i] for i in missing])

        rows, computed = self.store.rows(np.fromiter(map(key_of, keys), np.int64, len(keys)), compute)
        self.computed += computed
        return rows
