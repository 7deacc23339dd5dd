"""The installed project: importable from anywhere, and CI runs the README's test command."""

import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_importable_from_outside_the_repository(tmp_path):
    code = "import handoffs, reservo_tools, grader; print(reservo_tools.get_quote('Focus', 'pro', 3))"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'price_cents': 6000}"


def test_editable_install_prints_no_deprecation_warning(tmp_path):
    """pip builds the project with the pinned setuptools: no deprecation banner, no package left undeclared."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    pip = [sys.executable, "-m", "pip", "--python", str(tmp_path / "venv" / "bin" / "python"), "install", "--no-deps"]
    output = ""
    for args in (["--dry-run", "-e", str(ROOT)], ["--quiet", "-e", str(ROOT)]):  # metadata, then the editable build
        done = subprocess.run(pip + args, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        output += done.stdout + done.stderr
    assert "Would install handoffs-course-0.2.0" in output
    assert "deprecat" not in output.lower(), output
    warnings = [line.split("BuildBackendWarning: ")[1] for line in output.splitlines() if "BuildBackendWarning" in line]
    assert set(warnings) <= {"Editable installation."}, warnings  # setuptools' note on every editable install
    code = "import importlib.metadata as m; print(m.metadata('handoffs-course')['License-Expression'])"
    done = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c", code],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout.strip() == "MIT", done.stderr


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in readme
    assert ci.strip().splitlines()[-1] == "make test"


DEVELOPMENT = {"pytest", "hypothesis", "ruff", "mypy", "playwright", "distributed", "anthropic", "google-genai"}


def _names(requirements):
    return {requirement.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip() for requirement in requirements}


def test_a_student_installs_the_course_without_the_development_stack(tmp_path):
    """Before: make course installed the development stack too (pytest, ruff, mypy, Playwright, Dask, live SDKs)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert _names(project["dependencies"]) & DEVELOPMENT == set()
    assert DEVELOPMENT <= _names(project["optional-dependencies"]["dev"])
    venv = tmp_path / "venv"  # a venv that does not exist: make -n prints every step it would take
    course = subprocess.run(["make", "-n", f"VENV={venv}", f"WORK={tmp_path / 'work'}", "course"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    test = subprocess.run(["make", "-n", f"VENV={venv}", "test"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    installs = [[line for line in done.stdout.splitlines() if "pip install" in line and "-e " in line]
                for done in (course, test)]
    assert installs[0] == [f"{venv}/bin/python -m pip install --quiet -e ."], course.stdout
    assert installs[1] == [f"{venv}/bin/python -m pip install --quiet -e .",
                           f'{venv}/bin/python -m pip install --quiet -e ".[dev]"'], test.stdout
