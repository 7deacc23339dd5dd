"""The course's own configuration: the ``[tool.grader]`` table of the ``pyproject.toml`` at the course's root.

    [tool.grader]
    packages = ["handoffs", "reservo_tools"]  # the course's packages: kernels may read them, the zygote imports them
    strict = true  # grader check refuses a test cell that breaks the assert_same rule (default false: a warning)

The grader names no course package itself (``grader`` is always allowed); a course without the
table grades with none, and is not strict. Read once per process, and without pydantic: the sandbox's launcher
reads it.
"""

import functools
import tomllib
from pathlib import Path
from typing import Any

from .errors import InvalidSetting

GUIDED, SOLUTIONS, STUDENT = "notebooks", "solutions", "student"
"""The course's folders under its root: guided walkthroughs, the sources of every exercise, the student versions."""


def course_root() -> Path:
    """The installed course's folder: the checkout this grader package lives in, wherever the command runs."""
    return Path(__file__).resolve().parents[1]


def _table(root: Path | None) -> tuple[Path, dict[str, Any]]:
    """The pyproject.toml of ``root`` (default the installed course's) and its ``[tool.grader]`` table ({} without
    the file or the table)."""
    path = (root or course_root()) / "pyproject.toml"
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return path, {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise InvalidSetting(f"{path} cannot be read: {error}") from None
    table = config.get("tool", {}).get("grader", {})
    return path, table if isinstance(table, dict) else {}


@functools.cache
def course_strict(root: Path | None = None) -> bool:
    """Whether ``grader check`` refuses a test cell that breaks the ``assert_same`` rule (``[tool.grader] strict``);
    false without the setting: such a cell, graded the nbgrader way, is a warning."""
    path, table = _table(root)
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        raise InvalidSetting(f"{path}: [tool.grader] strict must be true or false, not {strict!r}")
    return strict


@functools.cache
def course_packages(root: Path | None = None) -> tuple[str, ...]:
    """The course's packages (``[tool.grader] packages`` in ``root``'s pyproject.toml, default the installed
    course's); none without the file or the table."""
    path, table = _table(root)
    packages = table.get("packages", [])
    named = isinstance(packages, list) and all(
        isinstance(name, str) and all(part.isidentifier() for part in name.split(".")) for name in packages)
    if not named:
        raise InvalidSetting(f"{path}: [tool.grader] packages must be a list of package names, not {packages!r}")
    return tuple(packages)
