"""How long one feedback page takes to render: 40 markdown cells with tables, 40 code cells with output, 20 tests.

    python benchmarks/feedback_page.py [PAGES]

Prints the milliseconds per page (median of PAGES renders, 20 by default), the template already loaded.
"""

import statistics
import sys
import time

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.grading.report import Report, TestResult, TestStatus
from grader.pages import feedback_html


def main(pages: int = 20) -> None:
    cells = []
    for i in range(40):
        table = "| a | b |\n|---|---|\n| 1 | 2 |"
        cells += [new_markdown_cell(f"## Ejercicio {i}\n\nTexto con `código` y una tabla:\n\n{table}"),
                  new_code_cell(f"def f{i}(x):\n    return x * {i}\n" * 5, outputs=[nbformat.v4.new_output(
                      "stream", name="stdout", text="resultado\n" * 20)])]
    report = Report("a.ipynb", "s.ipynb", exercises=[TestResult(f"t{i}", 1, 1, TestStatus.PASSED) for i in range(20)])
    feedback_html(report, new_notebook(cells=cells))  # the template, loaded once
    times = []
    for _ in range(pages):
        start = time.perf_counter()
        feedback_html(report, new_notebook(cells=cells))
        times.append((time.perf_counter() - start) * 1000)
    print(f"feedback page: {statistics.median(times):.1f} ms per page (median of {pages})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
