# Every target bootstraps what it needs: on a fresh machine `make test` is the only command.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)

.PHONY: test lint typecheck unit bench demo clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench,plot]'
	@rm -f $(VENV)/.installed-* && touch $@

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/python bench/classify.py
	$(BIN)/python bench/analyze.py

demo: $(STAMP)
	@echo "The daemon and its demo arrive with the controller-daemon issue."
	@echo "Until then, here is the rules engine on the seed paytables:"
	$(BIN)/jackpotd paytables
	$(BIN)/jackpotd hand "As Ks Qs Js Ts Kh Qh" --paytable fortune-1

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
