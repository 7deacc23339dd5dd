# Two commands do all the set-up on a fresh machine with Python 3.11 and make:
#   make course   set up, then open the course in JupyterLab (HEADLESS=1: no browser, print the URL)
#   make test     set up, then lint (ruff), type-check (mypy) and run the whole test suite (pytest)

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
KERNEL := handoffs-course
PORT   ?= 8888
LABDIR := --ServerApp.root_dir=$(CURDIR) --ServerApp.default_url=/lab/tree/notebooks
ROOT   := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: setup course test clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (handoffs course)"
	touch $(STAMP)

setup: $(STAMP)

course: setup
ifdef HEADLESS
	$(BIN)/jupyter lab $(ROOT) --no-browser --ip=127.0.0.1 --port=$(PORT) $(LABDIR)
else
	$(BIN)/jupyter lab $(ROOT) $(LABDIR)
endif

test: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build *.egg-info shared/*.egg-info
