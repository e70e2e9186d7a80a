"""Process reward model library: plain Python + torch, no Django imports.

Pieces: `config.PRMConfig`, `examples` (labeled solutions -> step examples), `featurizers`
(hashed n-grams by default, MiniLM, local Hugging Face models) with a `FeatureCache`, `model`
(ensemble head, uncertainty, solution scores), `train` (loop, checkpoints), `metrics`,
`selection` (queue priorities) and `simulate` (offline active-learning simulation).
"""

from ml.prm.config import PRMConfig
from ml.prm.examples import StepExample, examples_from_record, examples_from_steps

__all__ = ["PRMConfig", "StepExample", "examples_from_record", "examples_from_steps"]
