"""grader: generate student notebooks, grade submissions, batch a class and check the course."""

__version__ = "0.1.0"
