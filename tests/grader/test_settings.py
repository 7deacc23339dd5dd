"""The grader's configuration: the environment read in one place (grader.settings), the limits' flags from Limits."""

import ast
import dataclasses
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader import __main__ as cli
from grader.course_config import course_packages
from grader.errors import InvalidSetting
from grader.grading.execute import Limits
from grader.settings import VARIABLES, Settings, settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_defaults_when_no_variable_is_set():
    assert Settings.from_environ({}) == Settings()
    assert Settings.from_environ({name: "" for name in VARIABLES.values()}) == Settings()  # empty is unset
    got = Settings()
    assert (got.sandbox, got.sandbox_dir, got.zygote_enabled, got.sandbox_uid, got.spares) == (
        "auto", None, True, None, 2)


@pytest.mark.parametrize(("name", "value", "field", "expected"), [
    ("GRADER_SANDBOX", "basic", "sandbox", "basic"),
    ("GRADER_SANDBOX", "full", "sandbox", "full"),
    ("GRADER_SANDBOX_DIR", "/srv/runs", "sandbox_dir", Path("/srv/runs")),
    ("GRADER_ZYGOTE", "0", "zygote_enabled", False),
    ("GRADER_ZYGOTE", "1", "zygote_enabled", True),
    ("GRADER_SANDBOX_UID", "1900001000", "sandbox_uid", 1_900_001_000),
    ("GRADER_SPARES", "0", "spares", 0),
    ("GRADER_SPARES", "5", "spares", 5),
])
def test_each_variable_sets_its_field(name, value, field, expected):
    assert getattr(Settings.from_environ({name: value}), field) == expected


@pytest.mark.parametrize(("name", "value", "message"), [
    ("GRADER_SANDBOX", "maybe", "GRADER_SANDBOX must be auto, full or basic, not 'maybe'"),
    ("GRADER_ZYGOTE", "yes", "GRADER_ZYGOTE must be 0 or 1, not 'yes'"),
    ("GRADER_SANDBOX_UID", "12a", "GRADER_SANDBOX_UID must be a whole number of at least 1, not '12a'"),
    ("GRADER_SANDBOX_UID", "0", "GRADER_SANDBOX_UID must be a whole number of at least 1, not '0'"),
    ("GRADER_SPARES", "-1", "GRADER_SPARES must be a whole number of at least 0, not '-1'"),
    ("GRADER_SPARES", "2.5", "GRADER_SPARES must be a whole number of at least 0, not '2.5'"),
])
def test_a_bad_value_is_one_line_naming_the_variable(name, value, message):
    with pytest.raises(InvalidSetting) as caught:
        Settings.from_environ({name: value})
    assert str(caught.value) == message


def _called_at_import(tree: ast.AST) -> list[str]:
    """The names called when the module runs: outside every function body."""
    found, todo = [], list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo += node.decorator_list if not isinstance(node, ast.Lambda) else []
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            found.append(node.func.id)
        todo += ast.iter_child_nodes(node)
    return found


def test_the_settings_are_frozen_and_read_when_asked_not_at_import(monkeypatch):
    with pytest.raises(ValueError, match="frozen"):
        Settings().spares = 3  # type: ignore[misc]
    monkeypatch.setenv("GRADER_SPARES", "not a number")
    with pytest.raises(InvalidSetting, match="GRADER_SPARES"):
        settings()
    monkeypatch.setenv("GRADER_SPARES", "4")
    assert settings().spares == 4  # read again on each call: a test or a benchmark may change it
    at_import = {path.name: _called_at_import(ast.parse(path.read_text(encoding="utf-8")))
                 for path in (ROOT / "grader").rglob("*.py")}
    assert [name for name, calls in at_import.items() if "settings" in calls] == []
    assert _called_at_import(ast.parse("AHEAD = settings().spares")) == ["settings"]  # the check sees one


def test_the_environment_is_read_in_grader_settings_alone():
    naming = [path.relative_to(ROOT).as_posix() for path in (ROOT / "grader").rglob("*.py")
              if any(isinstance(node, ast.Constant) and isinstance(node.value, str)
                     and re.fullmatch("GRADER_[A-Z_]+", node.value)
                     for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))]
    assert naming == ["grader/settings.py"]  # the one module that names a variable in its code
    assert set(VARIABLES.values()) == {"GRADER_SANDBOX", "GRADER_SANDBOX_DIR", "GRADER_ZYGOTE", "GRADER_SANDBOX_UID",
                                       "GRADER_SPARES", "GRADER_CACHE_DIR"}


def test_every_limit_has_its_flag_and_its_default_comes_from_limits():
    top = cli.parser()
    for command in ("grade", "batch", "store-outputs", "check"):
        args = top.parse_args({"batch": ["batch", "x", "--source", "s", "--out", "o"], "check": ["check"]}.get(
            command, [command, "x"]))
        assert cli._limits(args) == Limits(), command
    flags = [f.metadata["flag"] for f in dataclasses.fields(Limits)]
    assert flags == ["--timeout", "--budget", "--memory", "--output-bytes", "--interrupt-grace"]
    args = top.parse_args(["grade", "x", "--timeout", "5", "--budget", "60", "--memory", "512",
                           "--output-bytes", "1000", "--interrupt-grace", "0.5"])
    assert cli._limits(args) == Limits(5.0, 60.0, 512 * 2 ** 20, 1000, 0.5)


@pytest.mark.slow
def test_the_help_names_each_limit_with_its_default():
    done = subprocess.run([sys.executable, "-m", "grader", "batch", "--help"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    text = " ".join(done.stdout.split())
    for phrase in ("seconds per cell (default 30)", "seconds per notebook (default 600)",
                   "kernel memory limit in MiB (default 2048)", "(default 200000)", "(default 3)"):
        assert phrase in text


def test_the_course_names_its_packages_in_its_pyproject_and_the_grader_names_none(tmp_path):
    assert course_packages(ROOT) == course_packages() == ("handoffs", "reservo_tools")
    assert course_packages(tmp_path / "none") == ()  # no pyproject.toml: a course with no packages still grades
    for name, text, expected in (("plain", '[project]\nname = "x"\n', ()),
                                 ("own", '[tool.grader]\npackages = ["mylib", "my.tools"]\n', ("mylib", "my.tools"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text(text, encoding="utf-8")
        assert course_packages(tmp_path / name) == expected
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "pyproject.toml").write_text('[tool.grader]\npackages = "mylib"\n', encoding="utf-8")
    with pytest.raises(InvalidSetting, match=r"\[tool.grader\] packages must be a list of package names, not 'mylib'"):
        course_packages(tmp_path / "bad")
    named = [path.relative_to(ROOT).as_posix() for path in (ROOT / "grader").rglob("*.py")
             if any(isinstance(node, ast.Constant) and node.value in ("handoffs", "reservo_tools")
                    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))]
    assert named == []
    from grader.kernels.sandbox import readable_paths

    handoffs = Path(importlib.util.find_spec("handoffs").origin).parent
    assert str(handoffs) in readable_paths() or any(str(handoffs).startswith(p + "/") for p in readable_paths())
