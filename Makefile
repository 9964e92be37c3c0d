# The two commands a newcomer needs: `make demo` and `make test`. Both create .venv from the lock file.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint seed bench lock clean messages

# requirements.lock is what production runs (the Docker image installs only it); requirements-dev.lock adds the
# demo's embedded AWS endpoint and the development and CI tools, with the same pins for what both hold.
# requirements-pcluster.txt: ParallelCluster's own schema and validators, run on generated configurations in tests.
$(STAMP): requirements.lock requirements-dev.lock requirements-pcluster.txt portal/core/sso/provider/package-lock.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing the pinned requirements into $(VENV) (pip, quiet: about two minutes the first time)..."
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-pcluster.txt
	@# The OpenID Connect provider of the sign-in tests and the demo (Node.js, from the npm registry); without it
	@# the tests skip and the demo starts none.
	if command -v npm >/dev/null 2>&1; then npm ci --prefix portal/core/sso/provider --no-audit --no-fund --loglevel=error \
		|| echo "npm ci failed: the single sign-on tests will be skipped and the demo starts no provider"; \
		else echo "no npm: the single sign-on tests will be skipped and the demo starts no provider"; fi
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/python manage.py run_demo $(if $(PORT),--port $(PORT))

seed: install
	$(BIN)/python manage.py migrate --no-input
	$(BIN)/python manage.py seed_demo

# In parallel (pytest-xdist, TEST_WORKERS processes, the longest tests first), then the few tests marked serial
# alone (they restart a shared service); see tests/conftest.py. With a selection in PYTEST_ARGS a part may select
# nothing (pytest's exit status 5); the whole suite must run tests in both (a run whose processes all crash also
# ends with 5). Serial: make test PYTEST_ARGS=-n0 (or -p no:xdist).
# Two processes per core: the tests wait on live servers, browsers and Celery workers often enough that one
# process more than the cores still left them a fifth idle through the tests that commit (2 cores: 419 s with 3,
# 372 s with 4). Compiled modules are kept (__pycache__, ignored by git) even where
# the environment says not to write them: every process of the run imports the same ones.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
PYTEST := PYTHONDONTWRITEBYTECODE= DJANGO_SETTINGS_MODULE=portal.settings.test $(BIN)/python -m pytest
NO_XDIST := $(findstring no:xdist,$(PYTEST_ARGS))

# The database: DATABASE_URL when set, else PostgreSQL when one answers on 127.0.0.1:5432 (user postgres, trust),
# else SQLite (tests/pick_database.py; PORTAL_TEST_SQLITE=1 keeps SQLite).
test: install
	mkdir -p var
	@url=$$($(BIN)/python tests/pick_database.py); \
		if [ -n "$$url" ]; then export DATABASE_URL="$$url"; echo "Testing on PostgreSQL ($$url)"; \
		else echo "Testing on SQLite (no PostgreSQL answered on 127.0.0.1:5432)"; fi; \
		$(PYTEST) $(if $(NO_XDIST),,-n $(TEST_WORKERS)) --group parallel $(PYTEST_ARGS); \
		status=$$?; [ $$status -eq 0 ] || { [ $$status -eq 5 ] && [ -n "$(PYTEST_ARGS)" ]; } || exit $$status; \
		$(PYTEST) $(if $(NO_XDIST),,-n0) --group serial $(PYTEST_ARGS); \
		status=$$?; [ $$status -eq 0 ] || { [ $$status -eq 5 ] && [ -n "$(PYTEST_ARGS)" ]; } || exit $$status

lint: install
	$(BIN)/ruff check .
	DJANGO_SETTINGS_MODULE=portal.settings.test $(BIN)/lint-imports
	$(BIN)/djlint templates --lint
	if ls clusters/blueprints/*.yaml >/dev/null 2>&1; then $(BIN)/cfn-lint clusters/blueprints/*.yaml; fi

# After changing marked text: extract it into locale/ja/LC_MESSAGES/django.po (needs gettext's xgettext), write the
# Japanese there, then compile the .mo that is committed beside it (pure Python, no msgfmt): docs/i18n.md.
messages: install
	$(BIN)/python manage.py makemessages -l ja --no-location --no-obsolete \
		--ignore='.venv/*' --ignore='tests/*' --ignore='bench/*' --ignore='var/*'
	$(BIN)/python manage.py compile_catalogue

# One benchmark at a time (each prints its ratio against a floor measured in the same run; see its docstring for
# the database it needs): make bench BENCH=scale BENCH_ARGS="--runs 15"
bench: install
	@if [ -z "$(BENCH)" ]; then echo "make bench BENCH=<name> [BENCH_ARGS=...], name one of:"; \
		ls bench/*.py | grep -v -e harness.py -e _stack.py -e _settings.py | xargs -n1 basename | sed 's/\.py$$//'; exit 2; fi
	$(BIN)/python bench/$(BENCH).py $(BENCH_ARGS)

# Re-pin after editing requirements*.in (needs pip-tools in the venv): production first, then everything else
# constrained by it.
lock: install
	$(BIN)/python -m pip install --quiet pip-tools
	$(BIN)/pip-compile --quiet --strip-extras --allow-unsafe -o requirements.lock requirements.in
	$(BIN)/pip-compile --quiet --strip-extras --allow-unsafe -o requirements-dev.lock \
		requirements.in requirements-demo.in requirements-dev.in

clean:
	rm -rf $(VENV) var/staticfiles .pytest_cache
