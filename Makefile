# Two commands do all the set-up on a fresh machine with Python 3.11 and make:
#   make course   set up, fill work/ (the student's own copies), then open JupyterLab there
#                 (HEADLESS=1: no browser, print the URL; PORT=9000: another port)
#   make test     set up, then lint (ruff, pydoclint), type-check (mypy) and run the whole test suite (pytest)
#   make test-fast  while working: ruff and every test not marked slow (no kernel, no subprocess), under a minute

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEV    := $(VENV)/.installed-dev
LAB    := $(VENV)/.lab-settings
DOCLINT := $(VENV)/doclint/bin/pydoclint
PORT   ?= 8888
# JupyterLab's root (the student reaches work/ and the repository) and the student's folder, directly
# under the root (the default URL opens it).
# tests/course/test_browser.py points both at a temporary folder.
LABROOT ?= $(CURDIR)
WORK   ?= $(LABROOT)/work
LABDIR := --ServerApp.root_dir=$(LABROOT) --LabApp.default_url=/lab/tree/$(notdir $(WORK))
# the venv's kernels first: a python3 kernelspec in ~/.local/share/jupyter must not replace the course's Python
# and the venv first on PATH, also in JupyterLab's Terminal (jupyter/terminal.bashrc activates it after the
# user's ~/.bashrc), so `python lab.py` and `grader grade` run the course's programs there
LABENV := JUPYTER_PATH=$(abspath $(VENV))/share/jupyter$(if $(JUPYTER_PATH),:$(JUPYTER_PATH)) \
          PATH=$(abspath $(BIN)):$(PATH) COURSE_VENV=$(abspath $(VENV))
TERMINAL := --ServerApp.terminado_settings='{"shell_command": ["bash", "--rcfile", "$(abspath jupyter/terminal.bashrc)", "-i"]}'
ROOT   := $(if $(filter 0,$(shell id -u)),--allow-root,)
NBGRADER_SERVER := formgrader assignment_list course_list validate_assignment

.PHONY: setup course work test test-fast clean

# the course: the library, the grader, JupyterLab and what the lessons run (a student needs no more)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

# and the development stack, for make test: pytest, linters, the type checker, the browser driver, Dask, live SDKs
$(DEV): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(DEV)

# JupyterLab for students, inside the venv only: no news prompt (overrides.json), no nbgrader
# panels or toolbar (page_config.json, server extensions off). Notebooks use the venv's python3 kernel.
$(LAB): $(STAMP) jupyter/overrides.json jupyter/page_config.json
	mkdir -p $(VENV)/share/jupyter/lab/settings $(VENV)/etc/jupyter/labconfig
	cp jupyter/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	cp jupyter/page_config.json $(VENV)/etc/jupyter/labconfig/page_config.json
	$(BIN)/jupyter server extension disable --sys-prefix $(addprefix nbgrader.server_extensions.,$(NBGRADER_SERVER)) \
		>/dev/null 2>&1
	rm -rf $(VENV)/share/jupyter/kernels/handoffs-course
	touch $(LAB)

setup: $(STAMP) $(LAB)

# pydoclint in a venv of its own (see [tool.pydoclint] in pyproject.toml for why)
$(DOCLINT): | $(STAMP)
	$(BIN)/python -m venv $(VENV)/doclint
	$(VENV)/doclint/bin/python -m pip install --quiet "pydoclint>=0.12,<0.13"

work: setup
	$(BIN)/python -m grader.authoring.workspace $(WORK)

course: work
ifdef HEADLESS
	$(LABENV) $(BIN)/jupyter lab $(ROOT) --no-browser --ip=127.0.0.1 --port=$(PORT) $(LABDIR) $(TERMINAL)
else
	$(LABENV) $(BIN)/jupyter lab $(ROOT) $(LABDIR) $(TERMINAL)
endif

ifeq ($(wildcard tests),)
# a student release (grader release) has no test suite
test test-fast:
	@echo "la versión para estudiantes no trae tests del curso; califica tu trabajo con: .venv/bin/grader grade NOTEBOOK"
else
test: setup $(DEV) $(DOCLINT)
	$(BIN)/ruff check .
	$(DOCLINT) --config=pyproject.toml --quiet shared/handoffs shared/reservo_tools.py
	$(BIN)/mypy
	$(BIN)/python -m pytest

# while working: ruff, then the library's and the grader's unit tests (no kernel, no subprocess), under a minute
test-fast: setup $(DEV) $(DOCLINT)
	$(BIN)/ruff check .
	$(DOCLINT) --config=pyproject.toml --quiet shared/handoffs shared/reservo_tools.py
	$(BIN)/python -m pytest -q -m "not slow"
endif

clean:
	rm -rf $(VENV) build *.egg-info shared/*.egg-info
