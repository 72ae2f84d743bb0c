"""Online learning for prec@k: Perceptron@K and its active variant (seed 003; Kar, Narasimhan &
Jain 2015).

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
