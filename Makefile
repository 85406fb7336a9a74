# Every target bootstraps what it needs: on a fresh machine `make test` is the only command.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
# make demo's environment: the package (editable) and its runtime dependencies, nothing of the
# dev, bench or plot extras. It runs what an installation runs (about 80 MB to the dev's 540 MB).
RUN_VENV ?= .venv-run
RUN_STAMP := $(RUN_VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
# make dist's environment: build and the backend pyproject.toml's [build-system] names.
BUILD_VENV ?= .venv-build
BUILD_STAMP := $(BUILD_VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
# make install-service (deploy/install.sh): the environment's folder and the root the units,
# users and folders go under; another root stages an installation without touching this one.
JACKPOTD_PREFIX ?= /opt/jackpotd
JACKPOTD_ROOT ?= /
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# command:package pairs the tests need from the system (Debian/Ubuntu names). A command not on
# PATH is named by its full path (PostgreSQL's initdb and pg_ctl: tests/support/journal/postgres.py).
# Patroni, etcd and HAProxy run the three-node cluster of deploy/ha/ (tests/support/ha/ha_cluster.py).
SYSTEM_PACKAGES := mosquitto:mosquitto mosquitto_pub:mosquitto-clients socat:socat systemd-analyze:systemd chromium:chromium \
	promtool:prometheus openssl:openssl /usr/lib/postgresql/15/bin/initdb:postgresql-15 \
	patroni:patroni etcd:etcd-server haproxy:haproxy pdftoppm:poppler-utils

.PHONY: test test-fast lint typecheck unit unit-fast bench chaos wan fuzz demo dist install-service system-deps clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench,plot]'
	@rm -f $(VENV)/.installed-* && touch $@

$(RUN_STAMP): pyproject.toml
	@test -x $(RUN_VENV)/bin/python || $(PYTHON) -m venv $(RUN_VENV)
	$(RUN_VENV)/bin/python -m pip install --quiet -e .
	@rm -f $(RUN_VENV)/.installed-* && touch $@

$(BUILD_STAMP): pyproject.toml
	@test -x $(BUILD_VENV)/bin/python || $(PYTHON) -m venv $(BUILD_VENV)
	$(BUILD_VENV)/bin/python -m pip install --quiet build \
	  $$($(BUILD_VENV)/bin/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"])')
	@rm -f $(BUILD_VENV)/.installed-* && touch $@

system-deps:
	@missing=""; \
	for pair in $(SYSTEM_PACKAGES); do \
	  command="$${pair%%:*}"; package="$${pair##*:}"; \
	  PATH="$$PATH:/usr/sbin:/sbin" command -v "$$command" >/dev/null 2>&1 || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

test: lint typecheck unit

# The inner loop: the same checks, without the tests marked slow, fault, browser or exhaustive
# (markers in pyproject.toml). `make test` still runs everything.
test-fast: lint typecheck unit-fast

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) system-deps
	$(BIN)/pytest -q

unit-fast: $(STAMP) system-deps
	$(BIN)/pytest -q -m "not slow and not fault and not browser and not exhaustive"

# The failover chaos test's full form (docs/ha.md): 20 faults on the three-node cluster, 50 tables;
# writes bench/results/failover.json. Its short form runs in make test (tests/chaos/).
chaos: $(STAMP) system-deps
	mkdir -p bench/results
	cd tests && PYTHONPATH=$(CURDIR):$(CURDIR)/tests $(CURDIR)/$(BIN)/python -m support.ha.chaos.run

# The WAN test's full form (docs/wide-area.md, "The WAN test"): two properties and central on
# loopback, their links cut 20 times; writes bench/results/wan.json. Its short form runs in make
# test (tests/wan/).
wan: $(STAMP) system-deps
	mkdir -p bench/results
	cd tests && PYTHONPATH=$(CURDIR):$(CURDIR)/tests $(CURDIR)/$(BIN)/python -m support.widearea.wan.run

# The benchmarks' full forms (docs/benchmarks.md), about an hour; writes bench/results/. The
# daemon is started as an operator starts it (bench/service.py). Each script's short form runs in
# make test (tests/bench/).
bench: $(STAMP) system-deps
	mkdir -p bench/results
	set -o pipefail; $(BIN)/python bench/classify.py | tee bench/results/classify.txt
	set -o pipefail; $(BIN)/python bench/analyze.py | tee bench/results/analyze.txt
	$(BIN)/python bench/durability.py
	$(BIN)/python bench/postgres_durability.py
	$(BIN)/python bench/journal_growth.py
	$(BIN)/python bench/writes.py
	$(BIN)/python bench/heads.py
	$(BIN)/python bench/levels.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/throughput.py
	$(BIN)/python bench/profile.py
	$(BIN)/python bench/console.py

fuzz: $(STAMP)
	$(BIN)/python bench/fuzz.py

# make demo ARGS="--rounds 20 --tables 6": any option of jackpotd demo (jackpotd demo --help).
# It runs in $(RUN_VENV), the runtime dependencies only: a demo that needed a dev tool would fail.
demo: $(RUN_STAMP)
	$(RUN_VENV)/bin/jackpotd demo $(ARGS)

# The wheel and the sdist, into dist/ (docs/operations.md, "1. Install"). The sdist is the
# source tree as it stands (git's ignored files left out): build from a clean checkout. The
# wheel is built from the sdist, so it holds only what the sdist carries.
dist: $(BUILD_STAMP)
	rm -rf dist
	$(BUILD_VENV)/bin/python -m build --no-isolation --outdir dist .

# The wheel into $(JACKPOTD_PREFIX), the units, users and folders (deploy/install.sh), as root.
install-service: dist
	$(SUDO) env JACKPOTD_PREFIX='$(JACKPOTD_PREFIX)' JACKPOTD_ROOT='$(JACKPOTD_ROOT)' \
	  PYTHON='$(PYTHON)' deploy/install.sh dist/paigow_jackpot-*.whl

clean:
	rm -rf $(VENV) $(RUN_VENV) $(BUILD_VENV) dist .mypy_cache .pytest_cache .ruff_cache
