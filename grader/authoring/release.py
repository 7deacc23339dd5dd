"""What an instructor hands out: the course without its solutions and without any hidden test.

``release(root, out)`` copies the guided and student notebooks, the library, the grader, the
lab and the set-up files into a new folder ``out`` (never an existing one) and marks it as a
student release. There, ``grader grade`` grades a student's notebook on its visible tests only
(``grader.grading.pipeline``, ``visible_only``): with no solution to run, each check's expected side is
evaluated in the same kernel as its actual side, which is fine, since the student holds those
tests anyway. Before the folder is put in place, every notebook in it is checked: a hidden
test, a solution-only cell or a solution left in it stops the release.
"""

import json
import os
import shutil
import tempfile
from pathlib import Path

from ..course_config import GUIDED, SOLUTIONS, STUDENT
from ..errors import GraderError
from .metadata import HIDDEN_BEGIN, MARKERS, is_solution_only
from .notebooks import read_notebook, write_atomic

MARKER = ".grader-release.json"
RELEASED = (GUIDED, STUDENT, "shared", "grader", "jupyter", "schemas", "lab.py", "assessment.md", "Makefile",
            "pyproject.toml", ".gitignore")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc", ".ipynb_checkpoints")
SOLUTION_BEGIN = MARKERS["solution"][0]
README = """# Handoffs y transferencia de contexto: versión para estudiantes

Un curso en Jupyter sobre handoffs entre agentes y transferencia de contexto. Las lecciones están en
español; el código, en inglés.

```sh
make course    # prepara el entorno, copia los notebooks en work/ y abre el curso en JupyterLab
```

Trabaja en `work/exercises/` (los ejercicios) y en `work/guided/` (las lecciones guiadas). Para
calificarte con los tests visibles, tantas veces como quieras:

```sh
.venv/bin/grader grade work/exercises/03_handoff_pseudo_tool.ipynb
.venv/bin/grader grade work/exercises/03_handoff_pseudo_tool.ipynb --feedback informe.html   # y la página
```

Esta versión no trae soluciones ni tests ocultos: la nota de tu profesor también pasa los tests
ocultos, así que una puntuación completa aquí es una buena señal, no una promesa.
"""


class ReleaseError(GraderError):
    """A release cannot be made: the output folder exists, or something secret would be in it."""


def is_release(root: Path) -> bool:
    """Whether ``root`` is a student release (``grader release`` wrote it)."""
    return (root / MARKER).is_file()


def _secrets(folder: Path) -> list[str]:
    """What a release must not hold: a solutions folder, hidden tests, solution-only cells, solution markers."""
    found = [f"{SOLUTIONS}/"] if (folder / SOLUTIONS).exists() else []
    for path in sorted(folder.rglob("*.ipynb")):
        for cell in read_notebook(path).cells:
            if HIDDEN_BEGIN in cell.source or SOLUTION_BEGIN in cell.source or is_solution_only(cell):
                found.append(f"{path.relative_to(folder)}: a hidden test or a solution")
                break
    return found


def release(root: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write the student release of the course at ``root`` into the new folder ``out``; returns ``out``."""
    root, out = Path(root), Path(out)
    if out.exists():
        raise ReleaseError(f"{out} already exists; give a new folder")
    missing = [name for name in (GUIDED, STUDENT, "shared", "grader") if not (root / name).exists()]
    if missing:
        raise ReleaseError(f"{root} is not a course checkout (no {', '.join(missing)})")
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name in RELEASED:
            if (root / name).is_dir():
                shutil.copytree(root / name, building / name, ignore=SKIPPED, symlinks=True)
            elif (root / name).is_file():
                shutil.copy2(root / name, building / name)
        write_atomic(building / "README.md", README)
        write_atomic(building / MARKER, json.dumps({"release": "student", "grades": "visible tests only"}) + "\n")
        found = _secrets(building)
        if found:
            raise ReleaseError(f"the release would hold {found[0]}" + (f" (and {len(found) - 1} more)"
                                                                       if len(found) > 1 else ""))
        building.chmod(0o755)
        os.rename(building, out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return out
