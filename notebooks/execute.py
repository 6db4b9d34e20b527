"""Re-execute the notebooks in place, so that their committed outputs can be regenerated.

    python notebooks/execute.py                                # every notebook here
    python notebooks/execute.py notebooks/hmk_dimension.ipynb  # some of them

Each notebook runs top to bottom in a fresh ``python3`` kernel (nbclient; the kernel is
ipykernel, see requirements-dev.txt) started in the repository root, so the packages are
imported from the working tree.  A cell that raises stops the run and leaves the file
unchanged.  Prints the wall time of each notebook and the size of the written file.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: Longest a single cell may run (seconds); the notebooks aim at under a minute in all.
CELL_TIMEOUT = 600


def execute(path: Path, kernel_name: str = "python3", timeout: int = CELL_TIMEOUT) -> float:
    """Run every cell of the notebook at ``path`` and write it back with its outputs;
    returns the execution time in seconds."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=timeout, kernel_name=kernel_name,
                            record_timing=False, resources={"metadata": {"path": str(ROOT)}})
    start = time.perf_counter()
    client.execute(env={**os.environ, "PYTHONHASHSEED": "0"})
    seconds = time.perf_counter() - start
    nbformat.validate(notebook)
    nbformat.write(notebook, path)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to execute (default: every notebooks/*.ipynb)")
    parser.add_argument("--kernel", default="python3", help="Jupyter kernel name (default python3)")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(HERE.glob("*.ipynb"))
    for path in paths:
        seconds = execute(path, args.kernel)
        print(f"{path}: executed in {seconds:.1f} s, {path.stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
