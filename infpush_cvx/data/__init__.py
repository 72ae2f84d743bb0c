"""Problem data, the first layer: everything the models are fitted to.

- :mod:`.containers`: ``BipartiteData`` (positives, negatives, optional sample weights) and
  ``PairData`` (Rank2Plan's weighted pairs), validated, with sha256 fingerprints.
- :mod:`.queries`: ``QueryData`` (documents grouped by query, graded labels, per-document and
  per-query weights) for learning to rank.
- :mod:`.labels`: the one binary-label contract.
- :mod:`.generators`: the original script's instance, planted and degenerate families,
  LIBSVM-like binary sets, Rank2Plan pairs, LETOR-like queries.
- :mod:`.datasets`: UCI Ionosphere and Spambase, a8a, the letor set (LightGBM's LambdaRank
  example); :mod:`.svmlight`: the svmlight/LIBSVM reader (``qid:`` fields, group files).
- :mod:`.reductions`: identical rows collapsed into sample weights.
- :mod:`.degeneracy`: the scale-invariant test for ``w* = 0``.
- :mod:`.kernels`: kernel matrices, exact Gram factors and Nystroem factors.
"""

from .containers import BipartiteData, PairData, fingerprint
from .queries import QueryData

__all__ = ["BipartiteData", "PairData", "QueryData", "fingerprint"]
