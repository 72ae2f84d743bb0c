"""Series styles shared by the experiments' figures.

Every series gets a colour, a line style and a marker, so that series stay distinguishable in
greyscale and for colour-blind readers. Colours and markers are the project's
(:data:`infpush_cvx._plots.COLOURS` and ``MARKERS``).
"""

from __future__ import annotations

from ..._plots import COLOURS, MARKERS

#: line styles, cycled; 5 is prime to the 10 colours, so (colour, line style) pairs repeat only
#: after 50 series
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)))


def series_style(k: int) -> dict:
    """Keyword arguments ``color``, ``linestyle`` and ``marker`` for series ``k`` (from 0) of a
    ``matplotlib`` line plot; no two of the first 50 series share a (colour, line style) pair."""
    return {"color": COLOURS[k % len(COLOURS)], "linestyle": LINESTYLES[k % len(LINESTYLES)],
            "marker": MARKERS[k % len(MARKERS)]}
