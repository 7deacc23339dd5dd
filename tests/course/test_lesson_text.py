"""What a student reads: Spanish everywhere (the stubs' docstrings, what the guided notebooks print), the seed
documents never named, and one time estimate per lesson.

A text counts as English when it holds at least two English function words and more English
than Spanish ones, once names in quotes, backticks and brackets are set aside. Python's own
messages (``'NoneType' object is not subscriptable``) are what a student meets in any Python,
so the few a lesson shows on purpose are listed in ``PYTHON_MESSAGES``.
"""

import ast
import re
from pathlib import Path

import lesson_times
import pytest

from grader.authoring.notebooks import read_notebook

ROOT = Path(__file__).resolve().parents[2]
EN = frozenset("the is are must cannot with got of and to be was were has have for this that its by an should "
               "needs only when which from not there".split())
ES = frozenset("el la los las de que en un una es se por con para del al y su sus debe sin lo le ya más pero "
               "como".split())
NAMES = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\{[^}]*\}|\([^)]*\)")
PYTHON_MESSAGES = ("object is not subscriptable", "object is not callable", "is not JSON serializable",
                   "mutable default")
"""Python's own error texts, shown by a lesson's common mistakes on purpose."""
SEED_DOCUMENT = re.compile(r"(?i)\b(?:seeds?|semillas?)\s+0\d\d\b|\b(?:el|los|del)\s+seeds?\b")


def english(text: str) -> bool:
    words = re.findall(r"[a-záéíóúñü]+", NAMES.sub(" ", text).lower())
    en, es = sum(w in EN for w in words), sum(w in ES for w in words)
    return en >= 2 and en > es


def test_the_detector_tells_the_two_languages_apart():
    assert english("contract version 2 is not supported: this receiver reads version 1")
    assert english("InvalidFilter: keep_last_turns needs n >= 1, got 0")
    assert not english("la versión 2 del contrato no se puede leer: este receptor lee la versión 1")
    assert not english("ChainError: 'policy_agent' volvió a pasar la tarea a 'pricing_agent'")


def _printed(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        elif output.get("output_type") in ("execute_result", "display_data"):
            parts.append(output.get("data", {}).get("text/plain", ""))
        elif output.get("output_type") == "error":
            parts.append(f"{output.get('ename', '')}: {output.get('evalue', '')}")
    return "\n".join(parts)


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_what_a_guided_notebook_prints_is_spanish(path):
    english_lines = [f"cell {i}: {line.strip()}" for i, cell in enumerate(read_notebook(path).cells)
                     if cell.cell_type == "code" for line in _printed(cell).splitlines()
                     if english(line) and not any(message in line for message in PYTHON_MESSAGES)]
    assert not english_lines, "\n".join(english_lines)


@pytest.mark.parametrize("path", sorted((ROOT / "student").glob("*.ipynb")), ids=lambda p: p.stem)
def test_the_stubs_docstrings_are_spanish(path):
    found = []
    for cell in read_notebook(path).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                doc = ast.get_docstring(node) or ""
                if english(doc):
                    found.append(f"{node.name}: {doc.splitlines()[0]}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("folder", ["notebooks", "student"])
def test_students_never_read_of_seeds(folder):
    """Students never receive the seed documents: a lesson names the article or the class, never "el seed 002".
    (A lab run's random seed, "la semilla 7", is another thing and stays.)"""
    found = [f"{path.name}: {match}" for path in sorted((ROOT / folder).glob("*.ipynb"))
             for cell in read_notebook(path).cells
             for match in re.findall(SEED_DOCUMENT, cell.source)]
    assert not found, "\n".join(found)


TIME = re.compile(r"\*\*Tiempo estimado:\*\* unos (\d+) minutos para la lección guiada "
                  r"\(`work/guided/[^`]+`\) y unos\s+(\d+) para los ejercicios \(`work/exercises/[^`]+`\)")


@pytest.mark.parametrize("lesson", sorted(path.name for path in (ROOT / "solutions").glob("*.ipynb")))
def test_the_guided_and_exercise_notebooks_give_one_time_estimate(lesson):
    estimates = []
    for folder in ("notebooks", "solutions"):
        found = [match.groups() for cell in read_notebook(ROOT / folder / lesson).cells[:5]
                 for match in TIME.finditer(cell.source)]
        assert len(found) == 1, f"{folder}/{lesson}: no single «Tiempo estimado» sentence in its first cells"
        estimates.append(found[0])
    assert estimates[0] == estimates[1], f"{lesson}: guided says {estimates[0]}, exercises say {estimates[1]}"


LAB_LESSONS = ("10_operating_handoffs.ipynb", "11_lab.ipynb")
STORE_SIZE = re.compile(r"`handoffs/store\.py`[^.]*?unas (\d+) líneas")
KIND_COUNT = re.compile(r"(?i)\b(dos|tres|cuatro|cinco|seis|siete)\s+tipos\b")
COUNTS = {"dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7}


def _lab_lesson_texts() -> list[tuple[str, str]]:
    return [(f"{folder}/{lesson}", cell.source) for folder in ("notebooks", "solutions", "student")
            for lesson in LAB_LESSONS for cell in read_notebook(ROOT / folder / lesson).cells]


def test_lessons_10_and_11_say_transferir():
    """«transferir», not «traspasar» (GLOSSARY.md; «librería» is checked in every lesson below)."""
    found = [f"{where}: {word}" for where, text in _lab_lesson_texts()
             for word in re.findall(r"(?i)\btraspas\w*", text)]
    assert not found, "\n".join(found)


def test_lesson_11_is_not_the_last_and_counts_the_lab_s_ticket_kinds():
    """Lesson 12 comes after the lab, and the lab draws as many kinds of ticket as its SCENARIOS hold."""
    from handoffs.examples.lab import SCENARIOS

    texts = [(where, text) for where, text in _lab_lesson_texts() if "11_lab" in where]
    last = [where for where, text in texts if re.search(r"(?i)(la )?última lección|lección, la última", text)]
    assert not last, last
    counts = {(where, COUNTS[word.lower()]) for where, text in texts for word in KIND_COUNT.findall(text)}
    assert counts and all(count == len(SCENARIOS) for _, count in counts), counts
    assert any("lección 12" in text for where, text in texts if where.startswith("notebooks/")), "no «lección 12»"


def test_lesson_10_gives_the_store_s_real_size():
    """When lesson 10 says how long handoffs/store.py is, the number is within a tenth of its lines."""
    lines = len((ROOT / "shared" / "handoffs" / "store.py").read_text(encoding="utf-8").splitlines())
    said = [int(n) for where, text in _lab_lesson_texts() if "10_" in where for n in STORE_SIZE.findall(text)]
    assert all(abs(n - lines) <= lines / 10 for n in said), (said, lines)


REGIONAL = {"librería": "biblioteca (a software library)", "librerías": "bibliotecas", "de a uno": "uno por uno",
            "escalación": "escalamiento", "fichero": "archivo"}
"""Words the glossary replaces, with the word to write instead."""


def _student_text(cell) -> str:
    """What a student reads of a cell: markdown, or a code cell's comments, strings and what it printed."""
    return cell.source + ("\n" + _printed(cell) if cell.cell_type == "code" else "")


@pytest.mark.parametrize("folder", ["notebooks", "student"])
def test_the_glossary_words_are_used(folder):
    found = [f"{path.name} cell {i}: «{word}» (write {instead})"
             for path in sorted((ROOT / folder).glob("*.ipynb"))
             for i, cell in enumerate(read_notebook(path).cells)
             for word, instead in REGIONAL.items()
             if re.search(rf"(?i)\b{word}\b", _student_text(cell))]
    assert not found, "\n".join(found)


QUOTED = re.compile(r"\"([^\"]{12,})\"|«([^»]{12,})»|`([^`]{12,})`")


@pytest.mark.parametrize("folder", ["notebooks", "student"])
def test_a_string_said_to_be_english_is_english(folder):
    """A paragraph that says a text is in English quotes it in English, not its Spanish translation."""
    found = []
    for path in sorted((ROOT / folder).glob("*.ipynb")):
        for i, cell in enumerate(read_notebook(path).cells):
            if cell.cell_type != "markdown":
                continue
            for paragraph in cell.source.split("\n\n"):
                if not re.search(r"(?i)en inglés", paragraph):
                    continue
                spanish = [q for groups in QUOTED.findall(paragraph) for q in groups
                           if q and len(q.split()) >= 3 and not english(q) and
                           sum(w in ES for w in re.findall(r"[a-záéíóúñü]+", q.lower())) >= 2]
                found += [f"{path.name} cell {i}: said to be English, quoted in Spanish: {q[:80]}" for q in spanish]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("lesson", sorted(path.stem for path in (ROOT / "solutions").glob("*.ipynb")))
def test_the_time_estimate_is_the_measured_one(lesson):
    """Each notebook states what ``python benchmarks/lesson_times.py`` measures, and so does the README's table."""
    measured = lesson_times.estimate(lesson, ROOT)
    for folder in ("notebooks", "solutions", "student"):
        assert lesson_times.stated(ROOT / folder / f"{lesson}.ipynb") == (measured.guided, measured.exercises), (
            f"{folder}/{lesson}: run python benchmarks/lesson_times.py --write, then grader generate")
    row = next(line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
               if line.startswith(f"| `{lesson}`"))
    assert row.rstrip(" |").endswith(f"{measured.guided} + {measured.exercises}"), f"README: {row}"
