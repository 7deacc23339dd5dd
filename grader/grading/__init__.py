"""Grading one submission: assemble, run in a kernel, judge each check, report (``pipeline.grade``)."""
