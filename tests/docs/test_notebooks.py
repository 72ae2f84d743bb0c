"""The notebooks in ``notebooks/`` run top to bottom and are committed without outputs.

Each notebook is executed by nbclient in its own test (timeout 600 s per cell), from a temporary
working directory so nothing is written into the repository; its figures must reach the
outputs as inline PNGs (the kernel's inline backend works headless).
"""

from pathlib import Path

import pytest

# The notebooks extra: without it (nbformat, nbclient, matplotlib) these tests skip.
nbformat = pytest.importorskip("nbformat")

NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def test_there_are_notebooks():
    names = {p.name for p in NOTEBOOKS}
    assert {"01_solver_comparison.ipynb", "02_projection_core.ipynb",
            "04_rank2plan.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for k, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.get("outputs", []) == [], f"{path.name}: cell {k} has outputs"
            assert cell.get("execution_count") is None, f"{path.name}: cell {k} has a count"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    pytest.importorskip("matplotlib")  # every notebook draws
    NotebookClient = pytest.importorskip("nbclient").NotebookClient
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    assert list(tmp_path.iterdir()) == [], "notebooks write to a temporary directory, not cwd"
    # every notebook draws figures, and they show inline (no backend switched to Agg)
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]
    assert images, f"{path.name} shows no figure"
