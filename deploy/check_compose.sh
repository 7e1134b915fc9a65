#!/usr/bin/env bash
# Validate docker-compose.yml without running it. Installs nothing: it expects the project's dev
# dependencies in .venv (check-jsonschema) or on PATH.
#
#   deploy/check_compose.sh [COMPOSE_FILE]     # default: the repository's docker-compose.yml
#
# 1. `docker compose config -q` when a Compose engine plugin is available (full Compose parsing,
#    interpolation and validation, with the split profile included); otherwise
#    check-jsonschema against the Compose Specification's JSON schema, which check-jsonschema
#    ships (--builtin-schema vendor.compose-spec: no download).
# 2. deploy/check_compose.py: structural checks the schema cannot express (health checks,
#    migrate ordering, no literal secrets, production profile, referenced files and modules).
# Exits non-zero if any step fails.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FILE="$(realpath "${1:-$ROOT/docker-compose.yml}")"
VENV_BIN="$ROOT/.venv/bin"
PYTHON="$VENV_BIN/python"
[ -x "$PYTHON" ] || PYTHON="$(command -v python3)"

status=0
fail() { echo "FAIL: $*"; status=1; }

if [ ! -f "$FILE" ]; then
  echo "FAIL: no compose file at $FILE"
  exit 1
fi

if docker compose version >/dev/null 2>&1; then
  echo "== docker compose config -q (profile split included)"
  # Compose needs the env_file (.env) to exist. Without a real one, check the file in a scratch
  # project whose .env is the committed .env.example (placeholders only).
  if [ -f "$ROOT/.env" ] && [ "$(dirname "$FILE")" = "$ROOT" ]; then
    docker compose --project-directory "$ROOT" -f "$FILE" --profile split config -q || fail "docker compose config"
  else
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    cp "$FILE" "$scratch/docker-compose.yml"
    cp "$ROOT/.env.example" "$scratch/.env"
    cp "$ROOT/Dockerfile" "$scratch/Dockerfile"
    docker compose --project-directory "$scratch" -f "$scratch/docker-compose.yml" --profile split config -q \
      || fail "docker compose config"
  fi
else
  echo "== no 'docker compose' here: JSON schema of the Compose Specification (check-jsonschema)"
  CHECK_JSONSCHEMA="$VENV_BIN/check-jsonschema"
  [ -x "$CHECK_JSONSCHEMA" ] || CHECK_JSONSCHEMA="$(command -v check-jsonschema || true)"
  if [ -z "$CHECK_JSONSCHEMA" ]; then
    fail "check-jsonschema is not installed (it is a dev dependency: pip install -e '.[dev]')"
  else
    "$CHECK_JSONSCHEMA" --builtin-schema vendor.compose-spec "$FILE" || fail "Compose schema validation"
  fi
fi

echo "== structural checks (deploy/check_compose.py)"
"$PYTHON" "$ROOT/deploy/check_compose.py" "$FILE" --project-dir "$ROOT" || fail "structural checks"

if [ "$status" -eq 0 ]; then
  echo "compose file OK: $FILE"
else
  echo "compose file has problems: $FILE"
fi
exit "$status"
