"""The instructor's class view: ``grader report GRADES_DIR`` on a batch of 32 submissions, nothing run again.

The batch (module fixture) grades the fixture source with two wrong answers written down for
``charge`` (tests/grader/test_mistakes.py) against: 12 right answers, 8 that charge the full
price, 6 that return 3000 for every price, a pair that copied the same unusual answer, 2 that
also read the calling frame (suspicious), 1 with a test cell edited (restored) and 1 blank.
"""

import csv
import json
import re
from pathlib import Path

import pytest
from fixture_submissions import RIGHT_CHARGE, SOURCE, SUBMISSIONS, with_wrong_answers
from sample_class import COPIED, class_of

from grader.__main__ import main
from grader.authoring.notebooks import dumps
from grader.classroom.batch import batch
from grader.classroom.classview import student_of
from grader.classroom.similarity import CELL_CHARS, fingerprints, groups, similar_pairs, tokens
from grader.grading.execute import Limits

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    (root / "source.ipynb").write_text(dumps(with_wrong_answers()), encoding="utf-8")
    (root / "subs").mkdir()
    for name, nb in class_of().items():
        (root / "subs" / f"{name}.ipynb").write_text(dumps(nb), encoding="utf-8")
    rows = batch(root / "subs", root / "source.ipynb", root / "out", workers=2, limits=Limits(cell_timeout=10),
                 progress=False)
    assert len(rows) == 32 and all(row["status"] == "graded" for row in rows)
    assert main(["report", str(root / "out")]) == 0
    return root / "out"


def test_the_class_page_has_the_plot_the_tables_and_the_flags(graded):
    page = (graded / "class.html").read_text(encoding="utf-8")
    assert "32 submissions: 32 graded." in page
    assert re.search(r'<img id="score-plot" alt="score distribution" src="data:image/png;base64,[A-Za-z0-9+/=]{200,}"',
                     page)
    charge = re.search(r"<tr[^>]*><td>charge</td><td class=\"n\">(\d+)/32</td><td>(.*?)</td></tr>", page, re.S)
    assert charge is not None and charge.group(1) == "17"  # 12 right, the copied pair, the 2 renaming, the edited
    assert ("8 × <code>charge_wrong_full_price</code><p><strong>Cobrar el precio entero.</strong> El cargo es la "
            "mitad.</p>") in charge.group(2)  # the whole explanation, rendered
    assert "6 × <code>charge_wrong_constant</code>" in charge.group(2)
    assert "<td>test_charge</td><td>charge</td><td class=\"n\">17/32</td>" in page
    flagged = page.split('<section id="flagged">')[1].split("</section>")[0]
    assert all(f"frames{i}.ipynb" in flagged for i in range(2)) and "edited.ipynb" in flagged
    assert "right00.ipynb" not in flagged
    similar = page.split('<section id="similar">')[1].split("</section>")[0]
    assert "<td>copy_a.ipynb</td><td>copy_b.ipynb</td><td class=\"n\">100 %</td>" in similar
    assert "<td>frames0.ipynb</td><td>frames1.ipynb</td>" in similar  # the same unusual code, in two only
    assert similar.count("<tr>") == 3  # the header and those pairs: 12 alike right answers are the expected answer
    times = page.split('<section id="times">')[1]
    assert times.count("<tr>") == 33


def test_the_class_page_has_a_score_per_student(graded):
    page = (graded / "class.html").read_text(encoding="utf-8")
    students = page.split('<section id="students">')[1].split("</section>")[0]
    assert students.count("<tr") == 33  # the header and one per submission
    assert ('<td>full0</td><td>full0.ipynb</td><td class="n">3/5</td><td class="n"></td><td class="n">3/5</td>'
            '<td class="n">60</td>') in students
    assert '<td>right00</td><td>right00.ipynb</td><td class="n">5/5</td>' in students


def test_the_histogram_counts_submissions_on_an_integer_axis():
    from grader.pages import score_figure

    for percentages in ([50.0], [10.0, 95.0], [40.0] * 3):
        ticks = score_figure(percentages).axes[0].get_yticks()
        assert len(ticks) >= 2 and all(float(tick).is_integer() for tick in ticks), ticks


def test_the_gradebooks_have_one_row_per_student(graded):
    with (graded / "canvas.csv").open(encoding="utf-8", newline="") as handle:
        canvas = list(csv.reader(handle))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "source"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "5"]
    rows = {row[0]: row for row in canvas[2:]}
    assert len(rows) == 32 and rows["right00"] == ["right00", "", "", "right00", "", "5"]
    assert rows["full0"][-1] == "3" and rows["blank"][-1] == "0"
    with (graded / "moodle.csv").open(encoding="utf-8", newline="") as handle:
        moodle = list(csv.reader(handle))
    assert moodle[0] == ["username", "source", "source feedback"] and ["const0", "3", ""] in moodle
    assert len(moodle) == 33


def test_the_report_reads_the_reports_and_runs_nothing(graded, monkeypatch):
    import grader.grading.pipeline

    def no_running(*args, **kwargs):
        raise AssertionError("grader report ran a notebook")

    monkeypatch.setattr(grader.grading.pipeline, "execute", no_running)
    before = (graded / "class.html").read_bytes()
    assert main(["report", str(graded)]) == 0
    assert (graded / "class.html").read_bytes() == before  # the same reports, the same page
    saved = json.loads((graded / "reports" / "copy_a.json").read_text(encoding="utf-8"))
    assert saved["report"]["answers"]["charge"] == COPIED


def test_similarity_ignores_names_and_layout_and_what_the_source_holds():
    renamed = COPIED.replace("mitad", "half").replace("    ", "  ")
    assert fingerprints(COPIED) == fingerprints(renamed) and fingerprints(COPIED)
    answers = {"a": [COPIED], "b": [renamed], "c": [RIGHT_CHARGE]}
    assert similar_pairs(answers, 0.8) == [("a", "b", 1.0)]
    assert similar_pairs(answers, 0.8, expected=frozenset(fingerprints(COPIED))) == []  # the source's own code


OTHER = ("def quote_total(hours):\n    total = 0\n    for hour in range(hours):\n        total += 2000\n"
         "    assert total >= 0\n    return total if hours else 0")


def test_an_ipython_line_loses_nothing_but_its_own_cell():
    """Before: one "!: '''" line anywhere made the tokenizer fail, and the submission had no fingerprint."""
    assert fingerprints("!: '''\nx = sorted(y)[::-1] + [z for z in w if z]") != set()
    answers = {"a": [COPIED, "!: '''"], "b": [COPIED, "print(1)"]}
    assert similar_pairs(answers, 0.8) == [("a", "b", 1.0)]


def test_dead_code_padding_does_not_hide_a_copy():
    """Before: 60 lines of unique dead code took the Jaccard index below 80 % though every line was copied."""
    padding = "\n".join(f"def unused_{i}(a, b):\n    return [a] * {i} + list(range(b, {i}))" for i in range(60))
    pairs = similar_pairs({"a": [COPIED, OTHER], "b": [COPIED, OTHER, padding]}, 0.8)
    assert [(a, b) for a, b, _ in pairs] == [("a", "b")] and pairs[0][2] == 1.0  # all of a is in b


def test_three_students_with_one_answer_are_one_group_whatever_the_class_size():
    """Before: three identical answers in a class of 13 were dropped as 'common'."""
    answers = {f"s{i:02d}": [f"def charge(p):\n    return p // {i + 2}"] for i in range(10)}
    answers |= {name: [COPIED, OTHER] for name in ("ring_a", "ring_b", "ring_c")}
    pairs = similar_pairs(answers, 0.8)
    assert [(a, b) for a, b, _ in pairs] == [("ring_a", "ring_b"), ("ring_a", "ring_c"), ("ring_b", "ring_c")]
    found = groups(pairs)
    assert [group.members for group in found] == [("ring_a", "ring_b", "ring_c")]
    assert found[0].why.startswith("3 submissions, each at least 100 % alike to another in the group")


def test_a_huge_answer_cell_is_fingerprinted_only_in_part():
    """Before: one answer cell of 15 MB of tokens took 'grader report' to 1.1 GiB and 70 s."""
    huge = "x = 1\n" * 2_500_000
    assert len(tokens(huge)) <= CELL_CHARS // 2  # only its first CELL_CHARS characters are read


def test_the_student_is_the_first_folder_or_the_file_name():
    assert student_of("alice/03_handoff.ipynb") == "alice" and student_of("bob.ipynb") == "bob"


def test_report_on_a_folder_without_reports_is_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "reports does not exist: pass the --out folder of a batch" in capsys.readouterr().err
    assert not any(Path(tmp_path).iterdir())


def test_every_student_is_in_the_gradebooks_and_the_view_even_when_not_graded(tmp_path):
    subs = tmp_path / "subs"
    (subs / "fede").mkdir(parents=True)
    (subs / ".git").mkdir()
    for name in ("correct", "malformed_json", "wrong_notebook"):
        (subs / f"{name}.ipynb").write_bytes((SUBMISSIONS / f"{name}.ipynb").read_bytes())
    (subs / "fede" / "tarea.pdf").write_bytes(b"%PDF-1.4")
    (subs / ".git" / "config").write_text("[core]")
    batch(subs, SOURCE, tmp_path / "out", workers=1, limits=Limits(cell_timeout=10), progress=False)
    assert main(["report", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "class.html").read_text(encoding="utf-8")
    assert ("3 submissions: 1 graded, 2 could not be graded: malformed_json.ipynb, wrong_notebook.ipynb "
            '(<a href="#errors">why</a>); 1 file(s) skipped, not notebooks: fede/tarea.pdf.') in page
    with (tmp_path / "out" / "canvas.csv").open(encoding="utf-8", newline="") as handle:
        canvas = {row[0]: row for row in csv.reader(handle)}
    assert canvas["malformed_json"][-1] == "" and canvas["wrong_notebook"][-1] == "" and canvas["correct"][-1] == "5"
    with (tmp_path / "out" / "moodle.csv").open(encoding="utf-8", newline="") as handle:
        moodle = {row[0]: row for row in csv.reader(handle)}
    assert moodle["username"] == ["username", "source", "source feedback"]
    assert moodle["malformed_json"][1:] == ["", "not graded (error): not valid JSON (line 1, column 12)"]
    assert moodle["wrong_notebook"][2].startswith("not graded (wrong-lesson): holds no cell of the source notebook")
