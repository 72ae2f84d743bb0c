"""Online learning for prec@k: Perceptron@K ([Kar2015]) and its active variant ([Modi2017]).

The keys are those of docs/references.md; the algorithms are written out in docs/mathematics.md,
section 6.

- :mod:`.perceptron_at_k`: Algorithm 1 and the active Algorithm 2, run over mini-batches.
- :mod:`.sampling`: the label-query schemes of the active variant.
- :mod:`.features`: random Fourier features, the explicit map behind the RBF variant.
- :mod:`.stream`: mini-batch splitting and a generated imbalanced stream.
"""

from .features import RandomFourierFeatures
from .perceptron_at_k import PerceptronAtKResult, perceptron_at_k
from .sampling import SCHEMES, query_probabilities
from .stream import imbalanced_stream, minibatch_indices

__all__ = ["perceptron_at_k", "PerceptronAtKResult", "SCHEMES", "query_probabilities",
           "RandomFourierFeatures", "imbalanced_stream", "minibatch_indices"]
