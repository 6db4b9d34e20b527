"""The executed notebooks (notebooks/*.ipynb): committed with their outputs, and still
running against the current API.

The code cells are executed in-process (``exec``, matplotlib's Agg backend), not in a
Jupyter kernel: that needs only nbformat, shares the imports between the notebooks and
tests exactly the code a reader runs.  The notebooks use no IPython magics, so this is the
same code; ``notebooks/execute.py`` re-executes them in a kernel to regenerate the outputs.
"""

from __future__ import annotations

import ast
import os
import warnings
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")  # a development requirement; absent on the GPU image

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = ("adm_invariants.ipynb", "adm_atlas.ipynb", "hmk_dimension.ipynb",
             "gec_curvature.ipynb", "gt_gauge.ipynb", "rgt_hyperbolic.ipynb", "beyond.ipynb")
MAX_BYTES = 1_000_000
#: Modules a notebook must not import: the claim registries, the check context, the verdict
#: formatters and the ideal's internals.  Verdicts, claim lists, shown objects, ideal reports
#: and errata come from the public API (attngeom.verify, claims, show, ideal, ...).
INTERNAL_MODULES = ("attngeom.registry", "attngeom.lightning_alg.claims", "attngeom.geometry_proofs.claims",
                    "attngeom.core.claim", "attngeom.core.verdict_format",
                    "attngeom.core.verdict_markdown", "attngeom.lightning_alg.ideal")
INTERNAL_NAMES = ("REGISTRY", "CheckContext", "format_verdict", "verdict_line", "compute_ideal",
                  "render_report", "family_claims")


def read(name: str):
    return nbformat.read(NOTEBOOK_DIR / name, as_version=4)


def code_cells(notebook) -> list:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def test_every_notebook_is_tested_and_listed_in_the_readme():
    assert sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb")) == sorted(NOTEBOOKS)
    readme = (NOTEBOOK_DIR / "README.md").read_text()
    for name in NOTEBOOKS:
        assert name in readme


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_was_executed_with_figures(name):
    path = NOTEBOOK_DIR / name
    assert path.stat().st_size < MAX_BYTES
    notebook = read(name)
    nbformat.validate(notebook)
    cells = code_cells(notebook)
    # executed top to bottom in one kernel: counts 1, 2, ..., n
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    outputs = [output for cell in cells for output in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert not [o for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert sum(bool(cell.outputs) for cell in cells) >= len(cells) - 1   # the set-up cell prints nothing
    assert any("image/png" in o.get("data", {}) for o in outputs)
    # markdown cites the paper by short name and number
    text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    assert {"beyond.ipynb": "ADM"}.get(name, name.split("_")[0].upper()) in text


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_uses_the_public_api(name):
    """``import attngeom`` first; verdicts from attngeom.verify / dimension, errata from
    attngeom.errata; no claim registry, check context, verdict formatter or private name."""
    cells = code_cells(read(name))
    assert cells[0].source.splitlines()[0] == "import attngeom"
    source = "\n".join(cell.source for cell in cells)
    assert "attngeom.verify(" in source or "attngeom.dimension(" in source
    assert "attngeom.errata(" in source
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules, names = [node.module or ""], [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            modules, names = [alias.name for alias in node.names], []
        elif isinstance(node, ast.Attribute):
            modules, names = [], [node.attr]
        elif isinstance(node, ast.Name):
            modules, names = [], [node.id]
        else:
            continue
        for module in modules:
            assert not module.startswith(INTERNAL_MODULES), f"{name} imports {module}"
            if module.startswith("attngeom"):
                assert not any(part.startswith("_") for part in module.split(".")), f"{name} imports {module}"
                assert not any(n.startswith("_") for n in names), f"{name} imports {names} from {module}"
        assert not set(names) & set(INTERNAL_NAMES), f"{name} uses {set(names) & set(INTERNAL_NAMES)}"
    assert not any(isinstance(node, ast.Attribute) and node.attr.startswith("_")
                   and isinstance(node.value, ast.Name) and node.value.id == "attngeom"
                   for node in ast.walk(tree)), f"{name} reaches a private attribute of attngeom"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_code_runs_against_the_current_api(name, monkeypatch):
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(os.environ, "MPLBACKEND", "Agg")
    namespace = {"__name__": "__main__"}
    figures = 0
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*non-interactive.*")   # plt.show() under Agg
        for index, cell in enumerate(code_cells(read(name))):
            before = set(plt.get_fignums())
            exec(compile(cell.source, f"{name}[code cell {index}]", "exec"), namespace)
            figures += len(set(plt.get_fignums()) - before)
            plt.close("all")
    assert figures or "Image" in namespace   # at least one figure drawn (or displayed from a file)
