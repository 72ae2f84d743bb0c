"""The binary-label contract: one reading of ``y`` for metrics, data, rankers and loaders.

It follows scikit-learn (a target that ``sklearn.utils.multiclass.type_of_target`` calls
``"binary"``, and a classifier's sorted ``classes_`` whose last entry is the positive class),
without importing it:

- labels are one per item (1-D): booleans, integers, integer-valued floats or strings;
- refused with a ValueError naming the argument: NaN or infinite labels, non-integer floats
  (a continuous target), more than two distinct labels, complex numbers, mixed types;
- the classes are the distinct labels, sorted; the positive class is ``pos_label`` when given,
  else the greater label (``True``; ``1`` of {0, 1} and of {-1, 1}; ``2`` of {1, 2});
- strings have no "greater" class that would mean positive, so they need ``pos_label``;
- where one class alone is allowed (``require_both=False``: prec@k, a stream, a file), it is
  positive when it equals ``pos_label`` or, without ``pos_label``, when it is ``1``/``True``;
  ``0``, ``-1`` and ``False`` are negative; any other lone label is ambiguous (ValueError);
- ``classes`` (the labels seen when fitting) fixes the classes: ``y`` may hold only those, and
  the positive class is chosen among them, so a fold holding one class is read the same way.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

__all__ = ["BinaryLabels", "binary_labels"]


class BinaryLabels(NamedTuple):
    """``positive``: boolean mask, True for the positive class; ``classes``: sorted labels."""

    positive: np.ndarray
    classes: np.ndarray


def binary_labels(y, name: str = "y", *, pos_label=None, classes=None,
                  require_both: bool = True) -> BinaryLabels:
    """Read binary labels ``y`` under the contract of the module docstring.

    ``require_both``: both classes must occur in ``y`` (ValueError otherwise).
    """
    if pos_label is not None and not isinstance(pos_label, (str, bool, numbers.Real, np.generic)):
        raise TypeError(f"pos_label must be one label (a number, a boolean or a string), got "
                        f"{type(pos_label).__name__} {pos_label!r}")
    y = _label_array(y, name)
    found = np.unique(y)
    if classes is None:
        classes = found
    else:
        classes = np.unique(_label_array(classes, "classes"))
        unknown = [v for v in found.tolist() if v not in classes.tolist()]
        if unknown:
            raise ValueError(f"{name} has the label(s) {unknown}, not among the classes "
                             f"{classes.tolist()} seen when fitting")
    if classes.size > 2:
        raise ValueError(f"{name} must be binary, got {classes.size} distinct labels "
                         f"{_shown(classes)} (a multiclass target)")
    if require_both and found.size < 2:
        raise ValueError(f"{name} must contain two classes, positives and negatives; only the "
                         f"label {found.tolist()[0]!r} occurs (one class is empty)")
    positive_class = _positive_class(classes, name, pos_label)
    positive = np.zeros(y.shape[0], dtype=bool) if positive_class is None else \
        np.asarray(y == positive_class, dtype=bool)
    return BinaryLabels(positive=positive, classes=classes)


def _label_array(y, name: str) -> np.ndarray:
    """``y`` as a 1-D array of booleans, finite integer-valued numbers or strings."""
    y = np.asarray(y)
    if y.dtype.kind == "c":
        raise ValueError(f"{name} must hold real labels, got complex numbers")
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one label per item), got shape {y.shape}")
    if y.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one label is needed")
    if y.dtype.kind == "O":
        y = _from_objects(y, name)
    if y.dtype.kind == "f":
        if not np.all(np.isfinite(y)):
            raise ValueError(f"{name} contains NaN or infinite labels")
        if np.any(y != np.round(y)):
            raise ValueError(f"{name} holds non-integer values such as "
                             f"{y[y != np.round(y)][0].item()!r}: a continuous target, not "
                             f"binary labels")
    elif y.dtype.kind not in "biuUS":
        raise ValueError(f"{name} must hold booleans, numbers or strings, got dtype {y.dtype}")
    return y


def _from_objects(y: np.ndarray, name: str) -> np.ndarray:
    """An object array of all strings or all real numbers as a typed array; else ValueError."""
    items = y.tolist()
    if all(isinstance(v, str) for v in items):
        return np.array(items, dtype=str)
    if all(isinstance(v, (numbers.Real, np.bool_)) for v in items):
        return np.array(items)
    if any(v is None for v in items):
        raise ValueError(f"{name} has a missing label (None)")
    types = sorted({type(v).__name__ for v in items})
    raise ValueError(f"{name} must hold labels of one type (booleans, numbers or strings), got "
                     f"a mix of {types}")


def _positive_class(classes: np.ndarray, name: str, pos_label):
    """The label that is positive, or None when every label in ``classes`` is negative."""
    if pos_label is not None:
        for k, label in enumerate(classes.tolist()):
            if label == pos_label:
                return classes[k]
        if classes.size == 2:
            raise ValueError(f"pos_label={pos_label!r} is not one of the labels "
                             f"{classes.tolist()} of {name}")
        return None  # a single class, not the positive one
    if classes.dtype.kind in "US":
        raise ValueError(f"{name} has string labels {_shown(classes)}: pass pos_label to say "
                         f"which one is positive")
    if classes.size == 2:
        return classes[1]
    (only,) = classes.tolist()
    if only == 1:
        return classes[0]
    if only in (0, -1):
        return None
    raise ValueError(f"{name} holds the single label {only!r}, which is neither the 1 nor the 0 "
                     f"or -1 of the usual encodings: pass pos_label to say whether it is positive")


def _shown(values: np.ndarray, limit: int = 5) -> str:
    items = values.tolist()
    return str(items[:limit])[:-1] + (", ...]" if len(items) > limit else "]")
