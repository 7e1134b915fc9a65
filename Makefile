# Two commands do all the set-up on a fresh machine:
#   make run   - the site on the embedded default (SQLite, jobs in-process, demo data) at 127.0.0.1:8000
#   make test  - lint, migrations check and the whole test suite, fuzz suites included (PostgreSQL/Redis
#                when DATABASE_URL/REDIS_URL point at them, as .ci/run does)
#   make test-embedded - the suite again on the embedded default `make run` uses (SQLite, no Redis)
#   make fuzz  - only the fuzz suites (tests/fuzz); LEV_FUZZ_SCALE=3 hunts longer, 0.1 looks quickly
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-embedded fuzz install lint migrations-check pytest worker beat bench faults compose-config clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo --print-credentials
	@echo ""
	@echo "Admin:      http://$(HOST):$(PORT)/admin/"
	@echo "REST API:   http://$(HOST):$(PORT)/api/v1/deals/   (header: Authorization: Bearer <API key>)"
	@echo "API docs:   http://$(HOST):$(PORT)/api/v1/docs/"
	@echo "Health:     http://$(HOST):$(PORT)/health"
	@echo "MCP:        http://$(HOST):$(PORT)/mcp   (Streamable HTTP: by URL alone with OAuth, or the Bearer API key)"
	@echo "  Claude Code:    claude mcp add --transport http lev http://$(HOST):$(PORT)/mcp --header \"Authorization: Bearer <API key>\""
	@echo "  MCP Inspector:  npx @modelcontextprotocol/inspector  -> Streamable HTTP, URL above, Authorization header"
	@echo ""
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

test: $(STAMP) lint migrations-check compose-config pytest

lint: $(STAMP)
	$(BIN)/ruff check .

migrations-check: $(STAMP)
	$(BIN)/python manage.py makemigrations --check --dry-run

pytest: $(STAMP)
	$(BIN)/python -m pytest

# The embedded path: no DATABASE_URL (SQLite), no REDIS_URL (per-process rate limits and breaker,
# in-process jobs). The fuzz suites run at a quarter of their budget here: the full run is the other.
test-embedded: $(STAMP)
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL LEV_FUZZ_SCALE=$${LEV_FUZZ_SCALE:-0.25} \
		$(BIN)/python -m pytest

fuzz: $(STAMP)
	$(BIN)/python -m pytest -m fuzz tests/fuzz

worker: $(STAMP)
	$(BIN)/celery -A lev worker --loglevel=INFO

beat: $(STAMP)
	$(BIN)/celery -A lev beat --loglevel=INFO

compose-config: $(STAMP)
	deploy/check_compose.sh

bench: $(STAMP)
	$(BIN)/python bench/run.py

# Dependency faults under load (docs/reliability.md): PostgreSQL through a TCP proxy it cuts, its own
# redis-server, a Celery worker it kills. Needs redis-server on PATH and a PostgreSQL DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/lev_faults, a scratch database). About 3.5 minutes.
faults: $(STAMP)
	$(BIN)/python bench/faults.py $(FAULTS_ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache .ruff_cache
