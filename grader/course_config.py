"""The course's own configuration: the ``[tool.grader]`` table of the ``pyproject.toml`` at the course's root.

    [tool.grader]
    packages = ["handoffs", "reservo_tools"]  # the course's packages: kernels may read them, the zygote imports them

The grader names no course package itself (``grader`` is always allowed); a course without the
table grades with none. Read once per process, and without pydantic: the sandbox's launcher reads it.
"""

import functools
import tomllib
from pathlib import Path

from .errors import InvalidSetting


def course_root() -> Path:
    """The installed course's folder: the checkout this grader package lives in, wherever the command runs."""
    return Path(__file__).resolve().parents[1]


@functools.cache
def course_packages(root: Path | None = None) -> tuple[str, ...]:
    """The course's packages (``[tool.grader] packages`` in ``root``'s pyproject.toml, default the installed
    course's); none without the file or the table."""
    path = (root or course_root()) / "pyproject.toml"
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise InvalidSetting(f"{path} cannot be read: {error}") from None
    packages = config.get("tool", {}).get("grader", {}).get("packages", [])
    named = isinstance(packages, list) and all(
        isinstance(name, str) and all(part.isidentifier() for part in name.split(".")) for name in packages)
    if not named:
        raise InvalidSetting(f"{path}: [tool.grader] packages must be a list of package names, not {packages!r}")
    return tuple(packages)
