# Two commands do all the set-up on a fresh machine:
#   make run   - the site on the embedded default (SQLite, jobs in-process, demo data) at 127.0.0.1:8000;
#                HOST and PORT choose the address, e.g. `make run PORT=8001` (a taken port is reported
#                before anything else). Prints an admin password, the demo API key (the same on every run:
#                kept in .demo-api-key, gitignored) and ready-to-paste client commands carrying it.
#   make test  - lint, migrations check and the whole test suite, fuzz suites included (PostgreSQL/Redis
#                when DATABASE_URL/REDIS_URL point at them, as .ci/run does)
#   make test-embedded - the suite again on the embedded default `make run` uses (SQLite, no Redis)
#   make fuzz  - only the fuzz suites (tests/fuzz); LEV_FUZZ_SCALE=3 hunts longer, 0.1 looks quickly
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Where `make run` serves: `make run HOST=0.0.0.0 PORT=8001` (any other machine then also needs its
# host name in ALLOWED_HOSTS).
HOST ?= 127.0.0.1
PORT ?= 8000
# The suites run on both cores (pytest-xdist), a test file to a worker (its module fixtures built once);
# `make test PYTEST_WORKERS=0` runs them in this one process.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL = $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile)

.PHONY: run port-free test test-embedded fuzz install lint migrations-check pytest worker beat bench bench-ranking-1m bench-signals bench-ab-shortcuts bench-peers faults conformance \
	compose-config clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# port-free comes first (make builds prerequisites in order): seconds, not minutes, to hear of a taken port.
run: port-free $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo --print-credentials --base-url http://$(HOST):$(PORT)
	@echo ""
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

port-free:
	@$(PYTHON) deploy/check_port.py $(HOST) $(PORT)

test: $(STAMP) lint migrations-check compose-config pytest

lint: $(STAMP)
	$(BIN)/ruff check .

migrations-check: $(STAMP)
	$(BIN)/python manage.py makemigrations --check --dry-run

pytest: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_PARALLEL)

# The embedded path: no DATABASE_URL (SQLite), no REDIS_URL (per-process rate limits and breaker,
# in-process jobs). The fuzz suites run at a quarter of their budget here: the full run is the other.
test-embedded: $(STAMP)
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL LEV_FUZZ_SCALE=$${LEV_FUZZ_SCALE:-0.25} \
		$(BIN)/python -m pytest $(PYTEST_PARALLEL)

fuzz: $(STAMP)
	$(BIN)/python -m pytest -m fuzz tests/fuzz

worker: $(STAMP)
	$(BIN)/celery -A lev worker --loglevel=INFO

beat: $(STAMP)
	$(BIN)/celery -A lev beat --loglevel=INFO

compose-config: $(STAMP)
	deploy/check_compose.sh

bench: $(STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

# The ranking at 100k and 1M programs, side by side (about 3 minutes: the 100k directory is seeded in
# Python, then copied in SQL to 1M), each with and without 2,000 lenders x 50 accounts of stored signals
# (issue 37; --signal-accounts 0: none). `make bench BENCH_ARGS=--ranking-1m` adds 1M to the full run.
bench-ranking-1m: $(STAMP)
	$(BIN)/python bench/bench_ranking.py --sizes 100000,1000000 --repeat 3

# The lender signals' refresh (issue 37) over 100k placements of 50 accounts with 2,000 lenders, timed 3
# times, then phase by phase (its own database on the DATABASE_URL server, which must be PostgreSQL).
bench-signals: $(STAMP)
	$(BIN)/python bench/bench_signals.py --repeat 3

# A/B of shortcuts behind environment switches against MCP get_deal, interleaved call by call (issue 20's
# 10 % rule; docs/benchmarks.md, "Read shortcuts A/B"): `make bench-ab-shortcuts AB_ARGS="--switch LEV_X"`.
# Without a switch: an A/A run, the method's noise floor. About a minute per variant.
bench-ab-shortcuts: $(STAMP)
	$(BIN)/python bench/ab_shortcuts.py $(AB_ARGS)

# Lev MCP beside the official SDK servers (issue 24; docs/benchmarks.md, "Beside the official SDK servers"):
# MCP get_deal on the floor, the official SDK's MCPServer, FastMCP, Lev and django-mcp-server, each on 2
# workers, one client interleaved, then wrk at 8 connections. Builds the SDK peers' virtualenvs under
# .tools/peers/ from bench/peers/requirements-*.txt and installs wrk (apt-get) when missing. Needs a
# PostgreSQL DATABASE_URL (a scratch database) and REDIS_URL. About 7 minutes; PEERS_ARGS="--help".
bench-peers: $(STAMP)
	$(BIN)/python bench/peers/run.py $(PEERS_ARGS)

# The official MCP conformance suite (pinned; Node 22 and the suite installed into .tools/ when missing)
# against a live gunicorn with the suite's diagnostic tools on (LEV_MCP_CONFORMANCE_FIXTURE), for
# 2025-11-25 and 2026-07-28: passed/failed per revision and scenario, scenarios for features the server
# does not offer listed apart. Exit 1 when a required scenario fails for a revision in
# CONFORMANCE_REQUIRE (what .ci/run requires). About 20 s once installed.
CONFORMANCE_REQUIRE ?= 2025-11-25 2026-07-28
conformance: $(STAMP)
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL $(BIN)/python bench/conformance.py \
		$(foreach rev,$(CONFORMANCE_REQUIRE),--require $(rev)) $(CONFORMANCE_ARGS)

# Dependency faults under load (docs/reliability.md): PostgreSQL through a TCP proxy it cuts, its own
# redis-server, a Celery worker it kills. Needs redis-server on PATH and a PostgreSQL DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/lev_faults, a scratch database). About 3.5 minutes.
faults: $(STAMP)
	$(BIN)/python bench/faults.py $(FAULTS_ARGS)

# Keeps .demo-api-key: clients set up with the demo key still connect after a fresh `make run`.
clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm .pytest_cache .ruff_cache
