"""The stored record of an optimal value: its keys, and reading and writing one JSON file.

Reading a record checks it (:func:`parse_record`, then :func:`check_record`): UTF-8 JSON with no
key given twice (``json`` keeps the last silently, so a second ``opt_val`` would hide the
first), nested at most ``MAX_JSON_DEPTH`` deep, with no integer of more than ``MAX_INT_DIGITS``
digits, an object holding every required key with its type, finite numbers, the status of an
optimal solve (``STORED_STATUSES``) and a nonnegative tolerance. Any fault is a
:class:`~infpush_cvx.files.MalformedFileError` (a ValueError) naming the file. A record is
written atomically (:func:`write_record`), never with NaN or infinity.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import cvxpy as cp

from ..files import MalformedFileError, write_text_atomic

#: The keys every record holds, with their kinds (see ``_check_value``). Records may hold more:
#: ``tier``, ``times`` and ``dataset`` (``OPTIONAL_KEYS``), and anything a later version adds.
REQUIRED_KEYS = {
    "problem_id": "string", "opt_val": "number", "status": "string", "solver": "string",
    "solver_options": "object", "tolerance": "number", "cross_check": "object",
    "instance": "string", "instance_fingerprint": "sha256", "spec_fingerprint": "sha256",
    "degenerate": "flag", "formulation": "object", "versions": "object", "date": "string",
}
OPTIONAL_KEYS = {"tier": "string", "times": "object", "dataset": "object"}
#: The keys of a record's ``formulation``: the stored definition, shown when it changed.
FORMULATION_KEYS = {"name": "string", "options": "object", "lam": "number"}
#: The status of the reference solve a record may hold: only an optimum is a reference value
#: (:func:`compute_reference` stores nothing else).
STORED_STATUSES = (cp.OPTIMAL,)
#: The statuses a record's cross-check may hold (``TIER_CROSS_CHECK_STATUSES``; records stored
#: before the cross-check's status was kept have none).
CROSS_CHECK_STATUSES = (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)
#: The deepest nesting of objects and arrays a record may hold (the records nest 4 deep).
MAX_JSON_DEPTH = 32
#: The most digits of an integer in a record (a record holds counts and options, never more).
MAX_INT_DIGITS = 30


def _check_value(value, kind: str, name: str) -> None:
    """ValueError naming ``name`` unless ``value`` is of ``kind``: "string", "number" (an int or
    float, never a bool; :func:`_check_tree` refuses NaN and infinity, and the parser integers
    of more than ``MAX_INT_DIGITS`` digits), "object", "flag" (true, false or null) or "sha256"
    (64 lower-case hexadecimal digits)."""
    types, expected = _KINDS[kind]
    if not isinstance(value, types) or (kind == "number" and isinstance(value, bool)):
        raise ValueError(f"{name} must be {expected}, got {type(value).__name__}")
    if kind == "sha256" and not (len(value) == 64 and set(value) <= set("0123456789abcdef")):
        raise ValueError(f"{name} must be 64 hexadecimal digits (a SHA-256), got {value!r}")


#: The kinds of a record's values: the Python types JSON reads them as, and their description.
_KINDS = {"string": (str, "a string"), "sha256": (str, "a string"),
          "number": ((int, float), "a number"), "object": (dict, "an object"),
          "flag": ((bool, type(None)), "true, false or null")}


def _check_keys(obj: dict, kinds: dict, prefix: str = "", required: bool = True) -> None:
    """ValueError naming the first key of ``kinds`` whose value in ``obj`` is not of its kind,
    or (``required``) is missing."""
    for key, kind in kinds.items():
        if key in obj:
            _check_value(obj[key], kind, prefix + key)
        elif required:
            raise ValueError(f"missing key {prefix + key!r}")


def _check_tree(value, name: str = "", depth: int = 0) -> None:
    """ValueError naming the first NaN or infinity anywhere inside ``value`` (JSON reads them),
    or saying that objects and arrays nest deeper than ``MAX_JSON_DEPTH``."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if isinstance(value, (dict, list)):
        if depth >= MAX_JSON_DEPTH:
            raise ValueError(f"objects and arrays nested more than {MAX_JSON_DEPTH} deep")
        if isinstance(value, dict):
            items = ((f"{name}.{key}" if name else str(key), item) for key, item in value.items())
        else:
            items = ((f"{name}[{k}]", item) for k, item in enumerate(value))
        for inner, item in items:
            _check_tree(item, inner, depth + 1)


def check_record(record, where: str) -> dict:
    """``record`` after checking its keys and their kinds; ValueError starting with ``where``."""
    try:
        if not isinstance(record, dict):
            raise ValueError(f"expected a JSON object, got {type(record).__name__}")
        _check_tree(record)
        _check_keys(record, REQUIRED_KEYS)
        _check_keys(record, OPTIONAL_KEYS, required=False)
        _check_keys(record["formulation"], FORMULATION_KEYS, "formulation.")
        if record["status"] not in STORED_STATUSES:
            raise ValueError(f"status must be one of {list(STORED_STATUSES)} (only an optimum is "
                             f"a reference value), got {record['status']!r}")
        if record["tolerance"] < 0:
            raise ValueError(f"tolerance must be nonnegative, got {record['tolerance']!r}")
        check_status = record["cross_check"].get("status", cp.OPTIMAL)
        if check_status not in CROSS_CHECK_STATUSES:
            raise ValueError(f"cross_check.status must be one of {list(CROSS_CHECK_STATUSES)}, "
                             f"got {check_status!r}")
    except ValueError as exc:
        raise MalformedFileError(f"{where}: {exc}") from None
    return record


def _unique_keys(pairs: list) -> dict:
    """A JSON object's pairs as a dict; ValueError for a key given twice (``json`` keeps the
    last silently, so a second ``opt_val`` would hide the first)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} given twice in one object")
        out[key] = value
    return out


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits, more than "
                         f"{MAX_INT_DIGITS}")
    return int(text)


def parse_record(data: bytes, path) -> object:
    """The JSON value of a record file's bytes; MalformedFileError naming ``path``."""
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=_unique_keys,
                          parse_int=_bounded_int)
    except RecursionError:  # the C parser recurses once per level
        raise MalformedFileError(f"{path}: not a valid JSON record (objects and arrays nested "
                                 f"more than {MAX_JSON_DEPTH} deep)") from None
    except ValueError as exc:  # JSONDecodeError, not UTF-8, a duplicate key, a long integer
        raise MalformedFileError(f"{path}: not a valid JSON record ({exc})") from None


def write_record(path: Path, record: dict) -> None:
    """Write a record atomically, in its folder: ValueError naming ``path`` when it is a
    symbolic link (``regenerate --accept-changes`` replaced the file a link in the reference
    folder pointed to, wherever it was); NaN and infinity are refused, never written."""
    if os.path.islink(path):
        raise ValueError(f"{path} is a symbolic link (to {os.readlink(path)}); a stored record "
                         f"is written in the reference folder only: remove the link first")
    write_text_atomic(path, json.dumps(record, indent=2, allow_nan=False) + "\n")
