"""The installed project: importable from anywhere, and CI runs the README's test command."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_importable_from_outside_the_repository(tmp_path):
    code = "import handoffs, reservo_tools, grader; print(reservo_tools.get_quote('Focus', 'pro', 3))"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'price_cents': 6000}"


def test_editable_install_prints_no_deprecation_warning():
    """pip builds the editable metadata with the pinned setuptools: the SPDX license string raises no banner."""
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "-e", str(ROOT)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "Would install handoffs-course" in done.stdout
    output = done.stdout + done.stderr
    assert "deprecat" not in output.lower(), output


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in readme
    assert ci.strip().splitlines()[-1] == "make test"
