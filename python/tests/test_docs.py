"""Every ```python block of the README and docs/PYTHON.md runs as written."""

import contextlib
import io
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BLOCKS = [(doc, i, code)
          for doc in ("README.md", "docs/PYTHON.md")
          for i, code in enumerate(re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(), re.S))]


def test_the_docs_have_python_blocks():
    assert {doc for doc, _, _ in BLOCKS} == {"README.md", "docs/PYTHON.md"}


@pytest.mark.parametrize("doc,i,code", BLOCKS, ids=[f"{d}#{i}" for d, i, _ in BLOCKS])
def test_block_runs(doc, i, code):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{doc} block {i}", "exec"), {})
    # A block's comment "# <text>" on a print line is what it prints.
    for line in code.splitlines():
        if line.lstrip().startswith("print(") and "#" in line:
            assert line.split("#", 1)[1].strip() in out.getvalue()
