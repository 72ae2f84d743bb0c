"""The README's Python examples run as written."""

import re
import textwrap
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, capsys):
    # a block inside a list item is indented with it
    exec(compile(textwrap.dedent(BLOCKS[index]), f"README.md python block {index}", "exec"), {})
