"""The disk store of step features (ml.prm.feature_store): rows come back exactly as featurized,
in the order asked, across segments, merges and concurrent writers; the app's rescoring reads
them instead of featurizing (ml.services.step_features)."""

from __future__ import annotations

import hashlib
import multiprocessing

import numpy as np
import pytest

from ml.prm import feature_store
from ml.prm.feature_rows import FeatureCache, Rows, featurize
from ml.prm.feature_store import FeatureStore, key_of
from ml.prm.featurizers import HashedNgramFeaturizer

FEATURIZER = HashedNgramFeaturizer(step_hash_dim=1024, context_hash_dim=256)


def _items(n: int, salt: str = "") -> list[tuple[str, tuple[str, ...], str]]:
    return [(f"problem {i % 7}", tuple(f"s{j}" for j in range(i % 3)), f"step {i}{salt} = {i * 3}") for i in range(n)]


def _dense(rows: Rows) -> np.ndarray:
    if not rows.sparse:
        return rows.dense
    out = np.zeros((len(rows), rows.dim), dtype=np.float32)
    for r in range(len(rows)):
        a, b = rows.indptr[r], rows.indptr[r + 1]
        np.add.at(out[r], rows.indices[a:b], rows.values[a:b])
    return out


def test_rows_come_back_as_featurized_in_the_order_asked(tmp_path):
    items = _items(300)
    direct = featurize(FEATURIZER, items)
    store = FeatureStore(tmp_path / "s")
    keys = np.arange(1000, 1300, dtype=np.int64)
    store.put(keys[:100], direct.take(np.arange(100)))
    store.put(keys[100:], direct.take(np.arange(100, 300)))

    order = np.random.default_rng(0).permutation(300)
    found, rows = store.lookup(keys[order])
    assert found.all() and len(store) == 300
    np.testing.assert_array_equal(_dense(rows), _dense(direct.take(order)))
    # a run of rows in the stored order is read as a slice and equals the gather
    found, rows = store.lookup(keys[120:180])
    np.testing.assert_array_equal(_dense(rows), _dense(direct.take(np.arange(120, 180))))
    # unknown keys are reported missing, known ones still returned in order
    found, rows = store.lookup(np.array([5, 1003, 7, 1001]))
    assert found.tolist() == [False, True, False, True]
    np.testing.assert_array_equal(_dense(rows), _dense(direct.take([3, 1])))
    assert not FeatureStore(tmp_path / "empty").lookup([1, 2])[0].any()


def test_rows_computes_only_the_missing_and_stores_them_once(tmp_path):
    items = _items(50)
    store = FeatureStore(tmp_path / "s")
    asked: list[int] = []
    keys = np.arange(50, dtype=np.int64)
    wanted = np.concatenate([keys, keys[45:]])  # the last five asked twice

    def compute(missing):  # positions in `wanted`; the item of key k is items[k]
        asked.extend(wanted[missing].tolist())
        return featurize(FEATURIZER, [items[k] for k in wanted[missing]])

    store.put(keys[:20], featurize(FEATURIZER, items[:20]))
    rows, computed = store.rows(wanted, compute)
    assert computed == 35 and sorted(set(asked)) == list(range(20, 50))
    np.testing.assert_array_equal(_dense(rows)[:50], _dense(featurize(FEATURIZER, items)))
    assert len(store) == 50  # the repeated keys were stored once
    rows, computed = FeatureStore(tmp_path / "s").rows(keys, compute)  # another process: all read
    assert len(asked) == 35
    assert computed == 0
    np.testing.assert_array_equal(_dense(rows), _dense(featurize(FEATURIZER, items)))


def test_segments_merge_past_the_limit_and_the_first_copy_wins(tmp_path, monkeypatch):
    monkeypatch.setattr(feature_store, "MAX_SEGMENTS", 3)
    items = _items(60)
    direct = featurize(FEATURIZER, items)
    store = FeatureStore(tmp_path / "s")
    for start in range(0, 60, 10):
        store.put(np.arange(start, start + 10), direct.take(np.arange(start, start + 10)))
    # a later segment under an existing key (never in practice: rows are a pure function of the
    # step) does not replace the stored row
    store.put(np.array([0]), featurize(FEATURIZER, _items(1, salt="other")))
    segments = [p for p in (tmp_path / "s").iterdir() if p.name.startswith("seg-")]
    assert len(segments) <= 3 and not list((tmp_path / "s").glob(".tmp-*"))
    found, rows = store.lookup(np.arange(60))
    assert found.all()
    np.testing.assert_array_equal(_dense(rows), _dense(direct))


def test_dense_rows_round_trip(tmp_path):
    dense = Rows(dim=4, dense=np.arange(24, dtype=np.float32).reshape(6, 4))
    store = FeatureStore(tmp_path / "d")
    store.put(np.array([9, 3, 5, 1, 2, 8]), dense)
    found, rows = store.lookup(np.array([1, 9, 8]))
    assert found.all() and not rows.sparse
    np.testing.assert_array_equal(rows.dense, dense.dense[[3, 0, 5]])


def _writer(root: str, start: int, max_segments: int) -> None:
    feature_store.MAX_SEGMENTS = max_segments  # a spawned process imports the module afresh
    items = _items(400)
    store = FeatureStore(root)
    for lo in range(start, start + 200, 20):  # overlapping ranges from two processes
        store.put(np.arange(lo, lo + 20), featurize(FEATURIZER, items[lo : lo + 20]))


def test_concurrent_writers_lose_nothing(tmp_path):
    # Spawned, not forked: a fork of the test process copies its threads' locks held (Playwright's
    # loop, HF's telemetry thread in a full run) and its pipes. Forked writers hung at a lock, and,
    # left alive holding the Playwright driver's stdin, kept the whole run from ending.
    ctx = multiprocessing.get_context("spawn")
    # MAX_SEGMENTS 4: merges happen while the others write
    procs = [ctx.Process(target=_writer, args=(str(tmp_path / "c"), s, 4)) for s in (0, 100, 200)]
    for p in procs:
        p.start()
    try:
        for p in procs:
            p.join(120)
            assert p.exitcode == 0
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
    found, rows = FeatureStore(tmp_path / "c").lookup(np.arange(400))
    assert found.all()
    np.testing.assert_array_equal(_dense(rows), _dense(featurize(FEATURIZER, _items(400))))


def test_the_training_cache_reads_the_disk_store_in_a_new_process(tmp_path):
    items = _items(40)
    keys = [f"k{i}" for i in range(40)]
    keys = [hashlib.sha1(k.encode()).hexdigest() for k in keys]
    first = FeatureCache(FEATURIZER, store=FeatureStore(tmp_path / "ctx"))
    a = first.get(items, keys)
    assert first.computed == 40
    second = FeatureCache(FEATURIZER, store=FeatureStore(tmp_path / "ctx"))  # a fresh worker
    b = second.get(items, keys)
    assert second.computed == 0
    np.testing.assert_array_equal(_dense(a), _dense(b))
    assert FeatureStore(tmp_path / "ctx").contains([key_of(k) for k in keys]).all()


@pytest.mark.parametrize("digest", ["0" * 40, "f" * 40])
def test_keys_are_non_negative_int64(digest):
    assert 0 <= key_of(digest) < 2**63
