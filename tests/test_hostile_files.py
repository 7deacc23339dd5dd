"""Hostile files, names and folders: none of them stops a batch, and each ends where it should.

Measured before: one file of deeply nested JSON ended the whole batch (exit 2, no grades.csv),
a symlink to /dev/zero killed it, a FIFO hung it, a symlink to the solution earned full marks,
``alice/05_x.ipynb`` and ``alice__05_x.ipynb`` wrote the same report, control characters in an
exception's name rewrote the terminal table, and a 3,000-deep chain of folders made by a kernel
survived cleanup and broke every later grader's start.
"""

import csv
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from fixture_submissions import RIGHT_CHARGE, SOURCE, submission
from nbformat.v4 import new_code_cell, new_notebook

from grader.api import grade_notebooks
from grader.cleanup import remove_tree
from grader.execute import Limits, execute
from grader.kernels.folders import run_folder, sweep_stale
from grader.notebooks import MAX_DEPTH, dumps, read_notebook

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast



def answered(charge=RIGHT_CHARGE):
    """The fixture's student notebook answered (quote_total right, charge as given), as file text."""
    return dumps(submission(charge=charge))


def test_a_batch_grades_regular_files_only_and_every_bad_file_is_its_own_row(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / "05_x.ipynb").write_text(answered(), encoding="utf-8")
    (subs / "alice__05_x.ipynb").write_text(answered("def charge(price_cents):\n    return 0"), encoding="utf-8")
    (subs / "deep.ipynb").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    (subs / "deep_but_parsed.ipynb").write_text('{"nbformat": 4, "x": ' + "[" * 500 + "]" * 500 + "}",
                                                encoding="utf-8")
    (subs / "zero.ipynb").symlink_to("/dev/zero")
    (subs / "solution.ipynb").symlink_to(SOURCE)
    os.mkfifo(subs / "fifo.ipynb")
    with open(subs / "huge.ipynb", "wb") as handle:  # sparse: 70 MiB that cost no disk
        handle.truncate(70 * 1024 ** 2)
    (subs / "linked_folder").symlink_to(subs / "alice")  # a link to a folder is not walked: no duplicate
    done = subprocess.run([sys.executable, "-m", "grader", "batch", str(subs), "--source", str(SOURCE), "--out",
                           str(out), "--workers", "2", "--timeout", "10"], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    with open(out / "grades.csv", encoding="utf-8", newline="") as handle:
        rows = {row["submission"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"alice/05_x.ipynb", "alice__05_x.ipynb", "deep.ipynb", "deep_but_parsed.ipynb",
                         "zero.ipynb", "solution.ipynb", "fifo.ipynb", "huge.ipynb"}
    assert (rows["alice/05_x.ipynb"]["score"], rows["alice__05_x.ipynb"]["score"]) == ("5", "3")
    errors = {name: row["error"] for name, row in rows.items() if row["status"] == "error"}
    assert errors == {
        "deep.ipynb": f"JSON nested more than {MAX_DEPTH} levels deep",
        "deep_but_parsed.ipynb": f"JSON nested more than {MAX_DEPTH} levels deep",
        "zero.ipynb": "a symbolic link; only regular files are graded",
        "solution.ipynb": "a symbolic link; only regular files are graded",
        "fifo.ipynb": "not a regular file; only regular files are graded",
        "huge.ipynb": "larger than 64 MiB",
    }
    names = sorted(p.name for p in (out / "reports").iterdir())
    assert names == ["alice%2F05_x.json", "alice__05_x.json"]  # one each, and each reads back as its path
    assert [urllib.parse.unquote(Path(name).stem) for name in names] == ["alice/05_x", "alice__05_x"]
    assert sorted(p.name for p in (out / "feedback").iterdir()) == ["alice%2F05_x.html", "alice__05_x.html"]


def test_control_characters_never_reach_the_terminal():
    raising = ("class Forged(Exception):\n    pass\n"
               "Forged.__name__ = Forged.__qualname__ = 'X\\x1b[2K\\rscore: 18/18\\x1b]0;t\\x07\\u202e'\n"
               "def charge(price_cents):\n    raise Forged('\\x1b[31mrojo\\r')")
    report, _ = grade_notebooks(read_notebook(SOURCE), submission(charge=raising), limits=Limits(cell_timeout=10))
    table = report.table()
    assert not any(ord(ch) < 32 and ch != "\n" or ch in "\x7f\u202e" for ch in table), repr(table)
    assert "puntuación: 3/5" in table.splitlines()[-1]


def _chain(top: Path, depth: int) -> None:
    """``depth`` nested folders under ``top``, made relative to a descriptor: longer than PATH_MAX."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.mkfifo("fifo", dir_fd=fd)
    os.symlink("/", "root", dir_fd=fd)
    os.close(fd)


def test_a_folder_of_any_depth_and_content_is_removed(tmp_path):
    folder = tmp_path / "box"
    folder.mkdir()
    _chain(folder, 3000)
    locked = folder / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    locked.chmod(0)
    assert remove_tree(folder) and not folder.exists()
    assert Path("/").exists()  # the link to / was removed, never followed


def test_a_stale_folder_never_stops_another_grader(tmp_path):
    stale = tmp_path / "grader-999999999-1-abc"  # a grader process that no longer exists
    stale.mkdir()
    _chain(stale, 3000)
    assert sweep_stale(tmp_path) == [stale] and not stale.exists()


def test_a_kernel_that_digs_a_deep_chain_leaves_nothing_behind():
    dig = ("import os\nfd = os.open('.', os.O_RDONLY)\nfor _ in range(3000):\n    os.mkdir('d', dir_fd=fd)\n"
           "    child = os.open('d', os.O_RDONLY, dir_fd=fd)\n    os.close(fd)\n    fd = child\nprint('dug')")
    before = set(run_folder().iterdir())
    nb = new_notebook(cells=[new_code_cell(dig)])
    runs = execute(nb, Limits(cell_timeout=60))
    assert runs[0].ok and nb.cells[0].outputs[0]["text"] == "dug\n"
    assert set(run_folder().iterdir()) <= before  # the kernel's folder is gone
