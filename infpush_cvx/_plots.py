"""The project's figure palette and series styles, and whether matplotlib (the ``plots`` extra)
is installed.

Below every package that draws (the benchmark reports, the evaluation experiments), so that
they share one palette without importing each other. Importing this module does not import
matplotlib.
"""

from __future__ import annotations

#: Colours of the series: matplotlib's ten-colour "tab10" cycle (the dark half of "tab20").
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
#: The light half of "tab20", in the same hue order: series 10-19 take these, so 20 series have
#: 20 different colours (a light colour and its dark twin also differ in marker).
LIGHT_COLOURS = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
                 "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5")
#: Markers of the series; 7 is prime to 20, so (colour, marker) pairs repeat only after 140.
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
#: Line styles of the experiments' series, cycled; 5 is prime to the 10 colours, so (colour,
#: line style) pairs repeat only after 50 series.
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)))


def series_style(k: int) -> dict:
    """Keyword arguments ``color``, ``linestyle`` and ``marker`` for series ``k`` (from 0) of a
    ``matplotlib`` line plot of the evaluation experiments: every series differs in colour, line
    style and marker, so that series stay distinguishable in greyscale and for colour-blind
    readers; no two of the first 50 series share a (colour, line style) pair."""
    return {"color": COLOURS[k % len(COLOURS)], "linestyle": LINESTYLES[k % len(LINESTYLES)],
            "marker": MARKERS[k % len(MARKERS)]}


def matplotlib_available() -> bool:
    """Whether matplotlib (the ``plots`` extra) can be imported, for the figures."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True
