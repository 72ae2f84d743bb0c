"""argparse types: a bad value is a one-line usage error naming the option.

Below every package with a command line (the CLI, the evaluation experiments' options), so that
they parse numbers alike without importing each other.
"""

from __future__ import annotations

import argparse


def argument_type(convert, ok, expected: str, must: str):
    """An argparse type: ``convert(text)`` (else "expected <expected>"), then ``ok(value)`` (else
    "<must>"); either failure is a one-line usage error naming the option."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{must}, got {text!r}")
        return value
    return parse


#: A positive integer (counts, sizes).
positive_int = argument_type(int, lambda v: v >= 1, "a positive integer", "must be at least 1")
#: An integer >= 0 (seeds).
nonnegative_int = argument_type(int, lambda v: v >= 0, "an integer >= 0", "must be >= 0")
