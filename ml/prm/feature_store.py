"""Feature rows kept on disk by 64-bit key, so a step is featurized once, not at every rescoring.

A store is a directory of append-only segments; a segment is a directory of .npy arrays (keys in
the order they were written, then CSR indptr / indices / values or one dense block) written under
a temporary name and renamed into place, so a reader never sees half a segment. Readers memory-map the arrays and gather
the rows they need; two writers racing on the same keys only store the same rows twice (features
are a pure function of the step), and the first copy wins on read. Past MAX_SEGMENTS the writer
that holds the lock merges every segment into one.

Nothing here knows Django: `ml.services.step_features` decides the directory (one per featurizer
spec and key space) and the keys (Step ids, or a hash of the step in context).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ml.prm.feature_rows import Rows

MAX_SEGMENTS = 12  # merged into one past this; a rescoring opens every segment's key array
FORMAT = 1  # bump when the on-disk layout changes (a new directory is started, the old one ignored)


def key_of(step_key: str) -> int:
    """A 63-bit key from a step_key hex digest (collisions: ~1e-7 at a billion keys)."""
    return int(step_key[:16], 16) & 0x7FFF_FFFF_FFFF_FFFF


def spec_digest(spec: dict, *, code_version: str = "") -> str:
    """Directory name for a featurizer spec: a change of spec or of featurizer code starts afresh."""
    import json

    raw = json.dumps({"spec": spec, "code": code_version, "format": FORMAT}, sort_keys=True)
    return hashlib.sha1(raw.encode()).hexdigest()[:16]


class _Segment:
    def __init__(self, path: Path):
        self.path = path
        load = lambda name: np.load(path / f"{name}.npy", mmap_mode="r")  # noqa: E731
        self.keys = load("keys")
        dim = int(np.load(path / "dim.npy"))
        if (path / "dense.npy").exists():
            self.rows = Rows(dim=dim, dense=load("dense"))
        else:
            self.rows = Rows(dim=dim, indptr=load("indptr"), indices=load("indices"), values=load("values"))


class FeatureStore:
    """Rows by int64 key under `root` (see the module docstring)."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self._names: tuple[str, ...] = ()
        self._segments: list[_Segment] = []
        self._index: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # sorted keys, segment, row

    # ---- reading ------------------------------------------------------------------------------

    def _segment_names(self) -> tuple[str, ...]:
        if not self.root.exists():
            return ()
        return tuple(sorted(p.name for p in self.root.iterdir() if p.name.startswith("seg-")))

    def _refresh(self) -> None:
        for _attempt in range(3):  # a merge may remove a segment between listing and opening it
            names = self._segment_names()
            if names == self._names and self._index is not None:
                return
            try:
                segments = [_Segment(self.root / n) for n in names]
            except FileNotFoundError:
                continue
            keys = [np.asarray(s.keys) for s in segments]
            all_keys = np.concatenate(keys) if keys else np.zeros(0, np.int64)
            seg = np.concatenate([np.full(len(k), i, np.int32) for i, k in enumerate(keys)]) if keys else all_keys
            row = np.concatenate([np.arange(len(k), dtype=np.int64) for k in keys]) if keys else all_keys
            order = np.argsort(all_keys, kind="stable")  # stable: the older segment's copy first
            sorted_keys = all_keys[order]
            first = np.ones(len(order), dtype=bool)
            first[1:] = sorted_keys[1:] != sorted_keys[:-1]
            order = order[first]
            self._names, self._segments = names, segments
            self._index = (sorted_keys[first], seg[order], row[order])
            return
        raise RuntimeError(f"feature store {self.root} kept changing while it was read")

    def __len__(self) -> int:
        self._refresh()
        return len(self._index[0]) if self._index else 0

    def _find(self, keys) -> tuple[np.ndarray, np.ndarray]:
        """(found mask, each key's position in the merged index; meaningless where not found)."""
        keys = np.asarray(keys, dtype=np.int64)
        self._refresh()
        sorted_keys = self._index[0]
        if not len(sorted_keys):
            return np.zeros(len(keys), dtype=bool), np.zeros(len(keys), dtype=np.int64)
        pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
        return sorted_keys[pos] == keys, pos

    def contains(self, keys) -> np.ndarray:
        return self._find(keys)[0]

    def lookup(self, keys) -> tuple[np.ndarray, Rows | None]:
        """(found mask, the found keys' rows in the order of `keys`) -- rows None when none is found."""
        found, pos = self._find(keys)
        _, seg, row = self._index
        if not found.any():
            return found, None
        pos = pos[found]
        parts, where = [], []
        segments = np.unique(seg[pos])
        for s in segments:
            sel = np.flatnonzero(seg[pos] == s)
            # several parts are copied once, by concat: until then a run of rows may stay a view of the map
            parts.append(self._segments[s].rows.take(row[pos[sel]], view=len(segments) > 1))
            where.append(sel)
        rows = Rows.concat(parts) if len(parts) > 1 else parts[0]
        placed = np.concatenate(where)
        if len(parts) == 1 or (np.diff(placed) > 0).all():  # already in query order: nothing to undo
            return found, rows
        inverse = np.empty(len(pos), dtype=np.int64)
        inverse[placed] = np.arange(len(pos))
        return found, rows.take(inverse)

    def rows(self, keys, compute: Callable[[np.ndarray], Rows]) -> tuple[Rows, int]:
        """Rows for every key, in order: stored ones read, the rest from `compute(positions of the
        missing keys)` and stored. Returns (rows, how many were computed)."""
        keys = np.asarray(keys, dtype=np.int64)
        found, stored = self.lookup(keys)
        missing = np.flatnonzero(~found)
        if not len(missing):
            return stored, 0
        new = compute(missing)
        _, first = np.unique(keys[missing], return_index=True)
        first = np.sort(first)  # each key once, in the order asked
        self.put(keys[missing][first], new.take(first))
        if stored is None:
            return new, len(missing)
        both = Rows.concat([stored, new])
        order = np.empty(len(keys), dtype=np.int64)
        order[np.flatnonzero(found)] = np.arange(found.sum())
        order[missing] = found.sum() + np.arange(len(missing))
        return both.take(order), len(missing)

    # ---- writing ------------------------------------------------------------------------------

    @contextmanager
    def _lock(self):
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def put(self, keys, rows: Rows) -> None:
        """Store rows under keys (a new segment); merges the segments when there are too many."""
        keys = np.asarray(keys, dtype=np.int64)
        if not len(keys):
            return
        with self._lock():  # rows keep the caller's order (solution, index): a later read of the
            self._write(keys, rows)  # same steps is then a slice, not a gather
            if len(self._segment_names()) > MAX_SEGMENTS:
                self._merge()

    def _write(self, keys: np.ndarray, rows: Rows) -> None:
        tmp = self.root / f".tmp-{uuid.uuid4().hex}"
        tmp.mkdir(parents=True)
        np.save(tmp / "keys.npy", keys)
        np.save(tmp / "dim.npy", np.asarray(rows.dim))
        if rows.sparse:
            np.save(tmp / "indptr.npy", np.asarray(rows.indptr, dtype=np.int64))
            np.save(tmp / "indices.npy", np.asarray(rows.indices, dtype=np.int32))
            np.save(tmp / "values.npy", np.asarray(rows.values, dtype=np.float32))
        else:
            np.save(tmp / "dense.npy", np.asarray(rows.dense, dtype=np.float32))
        # names sort by creation time, so "first copy wins" means "oldest copy wins"
        os.rename(tmp, self.root / f"seg-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}")

    def _merge(self) -> None:
        self._names, self._index = (), None
        self._refresh()
        _, seg, row = self._index
        kept = [np.sort(row[seg == s]) for s in range(len(self._segments))]  # first copies, stored order
        keys = np.concatenate([np.asarray(g.keys)[k] for g, k in zip(self._segments, kept, strict=True)])
        rows = Rows.concat([g.rows.take(k) for g, k in zip(self._segments, kept, strict=True)])
        old = list(self._names)
        self._write(keys, rows)
        for name in old:
            shutil.rmtree(self.root / name, ignore_errors=True)
        self._names, self._index = (), None
