# Steplabel: `make run` (demo on SQLite + filesystem broker) and `make test` (PostgreSQL + Redis).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# The install stamp is keyed on the requirements, so editing a pin reinstalls and nothing else does.
REQ_HASH := $(shell cat requirements.txt requirements-dev.txt 2>/dev/null | sha256sum | cut -c1-16)
PY_STAMP := $(VENV)/.installed-$(REQ_HASH)
HAS_FRONTEND := $(wildcard frontend/package.json)
FRONTEND_NPM_STAMP := frontend/node_modules/.npm-ci-$(shell cat frontend/package-lock.json 2>/dev/null | sha256sum | cut -c1-16)
FRONTEND_SOURCES := $(shell find frontend -path frontend/node_modules -prune -o -path frontend/dist -prune -o -type f -print 2>/dev/null)
PYTEST_ARGS ?=

.PHONY: help setup run test lint lock-check api-types bench services python-deps chromium frontend

help:
	@echo "make run    - set up, then serve the demo at http://127.0.0.1:8000/ with a Celery worker"
	@echo "make test   - set up, check PostgreSQL + Redis, lint, typecheck, then the whole test suite"
	@echo "make setup  - .venv with pinned requirements, Chromium for browser tests, the frontend build"
	@echo "make lint   - ruff check, ruff format --check, import contracts (lint-imports), API types current, TypeScript typecheck"
	@echo "make api-types - regenerate frontend/src/api/schema.d.ts from the OpenAPI schema"
	@echo "make bench  - run every bench/*.py script"

setup: python-deps chromium frontend

python-deps: $(PY_STAMP)

$(PY_STAMP): requirements.txt requirements-dev.txt
	@test -x $(BIN)/python || { echo "Creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	@rm -f $(VENV)/.installed-*
	@touch $@

chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "Installing Debian chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

ifneq ($(HAS_FRONTEND),)
frontend: frontend/dist/.built

# The lock is installed exactly as committed: `npm ci` never rewrites it. A lock that disagrees
# with package.json stops here (and in `make lint`) with the fix to run.
$(FRONTEND_NPM_STAMP): frontend/package.json frontend/package-lock.json
	@$(MAKE) --no-print-directory lock-check
	cd frontend && npm ci --no-audit --no-fund
	@touch $@

frontend/dist/.built: $(FRONTEND_NPM_STAMP) $(FRONTEND_SOURCES)
	cd frontend && npm run build
	@touch $@
else
frontend:
	@echo "No frontend/package.json yet: nothing to build"
endif

# Not `setup`: the demo needs no browser, and Chromium's apt-get failed `make run` for a user who
# may not install packages (or off Debian) before anything was served.
run: python-deps frontend
	DJANGO_SETTINGS_MODULE=config.settings.local $(BIN)/python manage.py run_dev

services: python-deps
	$(BIN)/python .ci/check_services.py

lock-check:
ifneq ($(HAS_FRONTEND),)
	@cd frontend && npm ci --dry-run --no-audit --no-fund >/dev/null 2>&1 || { \
		echo "ERROR: frontend/package-lock.json disagrees with frontend/package.json." >&2; \
		echo "       Run 'npm install' in frontend/ and commit package-lock.json." >&2; exit 1; }
endif

lint: python-deps lock-check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
ifneq ($(HAS_FRONTEND),)
	PYTHON=$(BIN)/python frontend/scripts/api-types.sh --check
	cd frontend && npm run typecheck
endif

# The frontend's API types (frontend/src/api/schema.d.ts) from the OpenAPI schema: run after
# changing a serializer, and commit the file (`make lint` fails while it is stale).
api-types: python-deps $(FRONTEND_NPM_STAMP)
	PYTHON=$(BIN)/python frontend/scripts/api-types.sh

test: setup services lint
ifneq ($(HAS_FRONTEND),)
	cd frontend && npm test
endif
	DJANGO_SETTINGS_MODULE=config.settings.test $(BIN)/pytest $(PYTEST_ARGS)

# The benches, bench/bench_*.py, each run without arguments, stopping at the first that fails. The
# other bench/*.py build the ML evidence tables from simulation runs that their docstrings give
# (hours; warm_start_table.py and config_switch_prm.py need arguments): `bench/*.py` ran them too,
# failed on those two and went on, and the loop's status was the last script's.
BENCH_SCRIPTS ?= $(wildcard bench/bench_*.py)
bench: python-deps
	@for script in $(BENCH_SCRIPTS); do \
		echo "== $$script"; \
		$(BIN)/python "$$script" || exit 1; \
	done
