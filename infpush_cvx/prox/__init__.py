"""Projections and proximal operators (the prox core).

- :mod:`.l1inf`: the l1,inf norm (sum over groups of the max), its dual l_inf,1, projections
  onto their balls and their proxes; two methods for the l1,inf projection (``METHODS``:
  ``"ssn"``, the default, and ``"sort"``), whose caps, threshold and pass count
  ``project_l1inf(..., return_info=True)`` reports (:class:`.L1InfInfo`).
- :mod:`.infinite_push`: the prox of the Infinite Push loss (one nonnegative l1,inf projection).
- :mod:`.l1ball`: simplex and l1-ball projections of vectors.
- :mod:`.elementwise`: soft thresholding and box projection.

Every operator returns the input's float dtype (float32 or float64).
"""

from .elementwise import project_box, soft_threshold
from .infinite_push import infinite_push_loss, prox_infinite_push_loss
from .l1ball import project_l1ball, project_simplex
from .l1inf import (METHODS, L1InfInfo, l1inf_norm, linf1_norm, project_l1inf, project_linf1,
                    prox_l1inf, prox_linf1)

__all__ = [
    "L1InfInfo", "METHODS", "infinite_push_loss", "l1inf_norm",
    "linf1_norm", "project_box", "project_l1ball", "project_l1inf", "project_linf1",
    "project_simplex", "prox_infinite_push_loss", "prox_l1inf", "prox_linf1", "soft_threshold",
]
