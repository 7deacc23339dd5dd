"""The pieces that make grading faster change no result: the scrubber's cut-short search, the phase record, the
modules a lesson's kernels find preloaded, the streams joined without nbconvert."""

import copy

from hypothesis import given, settings
from hypothesis import strategies as st
from nbconvert.preprocessors import CoalesceStreamsPreprocessor
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from grader import timing
from grader.grading.execute import coalesce_streams
from grader.grading.hidden import MASK, MIN_PARTIAL, Scrubber
from grader.grading.preload import imported_modules
from grader.timing import phase, phases

HIDDEN = new_code_cell('assert_same(f(1), 2)\n### BEGIN HIDDEN TESTS\nassert_same(quote_total(5), 10000)\n'
                       'assert_same(charge("Focus", 6400), 3200)\n### END HIDDEN TESTS')
SCRUBBER = Scrubber([HIDDEN], ['check(0, quote_total(5))', 'check(1, charge("Focus", 6400))'])


def cut_short_by_every_prefix(value: str) -> str:
    """The definition: of the lines, longest first, the first with a prefix of MIN_PARTIAL characters or more (not
    the whole line) that ends the text, at its longest."""
    for line in SCRUBBER.lines:
        for end in range(len(line) - 1, MIN_PARTIAL - 1, -1):
            if value.endswith(line[:end]):
                return value[:-end] + MASK
    return value


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab( )\"\\'5", max_size=30), st.sampled_from(SCRUBBER.lines), st.integers(0, 80))
def test_a_hidden_line_cut_short_is_masked_as_by_trying_every_prefix(before, line, cut):
    value = before + line[:cut]
    assert SCRUBBER._cut_short(value) == cut_short_by_every_prefix(value)


def test_a_phase_inside_another_is_not_counted_in_it(monkeypatch):
    clock = iter(range(100))
    monkeypatch.setattr(timing.time, "perf_counter", lambda: float(next(clock)))
    with phases() as record:  # 0
        with phase("run"):  # 1
            with phase("start-up"):  # 2
                pass  # 3
            with phase("start-up"):  # 4
                pass  # 5
        # 6
    assert record == {"run": 3.0, "start-up": 2.0}  # run: 1-2, 3-4 and 5-6


def test_a_phase_outside_a_record_records_nothing():
    with phase("run"):
        pass
    with phases() as record:
        pass
    assert record == {}


def test_time_spent_once_goes_to_the_next_record_only():
    timing.once(timing.WORKER_START, 1.5)
    with phases() as first:
        pass
    with phases() as second:
        pass
    assert first == {timing.WORKER_START: 1.5} and second == {}


def test_a_lessons_imports_are_read_from_its_code_cells_only():
    nb = new_notebook(cells=[
        new_markdown_cell("import from_markdown"),
        new_code_cell("import json, os.path as p\nfrom handoffs.examples import reservo, ticket\nfrom . import local\n"
                      "from star import *"),
        new_code_cell("%matplotlib inline\nimport wave\n!pip install not_python"),
        new_code_cell("def broken(:\n    import never_parsed"),
        new_code_cell("import importlib\nimportlib.import_module('dynamic')"),
    ])
    assert imported_modules([nb]) == ("handoffs.examples", "handoffs.examples.reservo", "handoffs.examples.ticket",
                                      "importlib", "json", "os.path", "star", "wave")


OUTPUTS = st.one_of(
    st.builds(lambda name, text: new_output("stream", name=name, text=text), st.sampled_from(["stdout", "stderr"]),
              st.text(alphabet="ab\r\n ", max_size=8)),
    st.builds(lambda n: new_output("execute_result", data={"text/plain": str(n)}, execution_count=1),
              st.integers(0, 9)),
    st.builds(lambda text: new_output("error", ename="ValueError", evalue=text, traceback=[]), st.text(max_size=3)))


@settings(max_examples=300, deadline=None)
@given(st.lists(OUTPUTS, max_size=8))
def test_streams_are_joined_as_nbconvert_joins_them(outputs):
    ours, theirs = new_code_cell("print(1)", outputs=outputs), new_code_cell("print(1)", outputs=copy.deepcopy(outputs))
    coalesce_streams(ours)
    CoalesceStreamsPreprocessor().preprocess_cell(theirs, {}, 0)
    assert ours.outputs == theirs.outputs
