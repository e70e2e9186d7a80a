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

.PHONY: help setup run test lint bench services python-deps chromium frontend

help:
	@echo "make run    - set up, then serve the demo at http://127.0.0.1:8000/ with a Celery worker"
	@echo "make test   - set up, check PostgreSQL + Redis, lint, typecheck, then the whole test suite"
	@echo "make setup  - .venv with pinned requirements, Chromium for browser tests, the frontend build"
	@echo "make lint   - ruff check, ruff format --check, TypeScript typecheck"
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

# npm ci refuses this lock because vite's Windows-only optional dependency is not in the registry
# here, so npm could not record it; npm install then installs exactly the locked tree, and the
# check after it fails if it had to change the lock (a real drift between package.json and lock).
$(FRONTEND_NPM_STAMP): frontend/package.json frontend/package-lock.json
	cd frontend && { npm ci --no-audit --no-fund 2>/dev/null || { \
		echo "npm ci refused the lock file; installing the locked tree with npm install"; \
		cp package-lock.json node_modules.lock.tmp; \
		npm install --no-audit --no-fund; \
		cmp -s package-lock.json node_modules.lock.tmp || { mv node_modules.lock.tmp package-lock.json; \
			echo "ERROR: package-lock.json is out of date with package.json: run npm install in frontend/ and commit it" >&2; exit 1; }; \
		rm -f node_modules.lock.tmp; }; }
	@touch $@

frontend/dist/.built: $(FRONTEND_NPM_STAMP) $(FRONTEND_SOURCES)
	cd frontend && npm run build
	@touch $@
else
frontend:
	@echo "No frontend/package.json yet: nothing to build"
endif

run: setup
	$(BIN)/python manage.py run_dev

services: python-deps
	$(BIN)/python .ci/check_services.py

lint: python-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
ifneq ($(HAS_FRONTEND),)
	cd frontend && npm run typecheck
endif

test: setup services lint
ifneq ($(HAS_FRONTEND),)
	cd frontend && npm test
endif
	DJANGO_SETTINGS_MODULE=config.settings.test $(BIN)/pytest $(PYTEST_ARGS)

bench: python-deps
	@for script in bench/*.py; do \
		[ -e "$$script" ] || continue; \
		echo "== $$script"; \
		$(BIN)/python "$$script"; \
	done
