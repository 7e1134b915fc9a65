"""Structural checks of docker-compose.yml that the Compose schema cannot express.

    python deploy/check_compose.py [COMPOSE_FILE] [--project-dir DIR] [--env-example FILE]

Relative paths in the file (build context, commands' files) are resolved against the project
directory (default: the repository root), so a copy of the file elsewhere can be checked against
this repository. Exit status 0 when every check passes, 1 otherwise (each problem is printed).

Checks:
* the services of the stack are there (db, redis, migrate, web, worker, beat, the split mcp);
* every service has a health check; only a one-shot service that others wait for with
  `service_completed_successfully` may disable it, and it must not restart;
* every long-running service of the Lev image waits for `migrate` to complete successfully (and
  for db and redis to be healthy); migrate waits for a healthy db and runs `manage.py migrate`;
* the Lev services run the production profile (LEV_ENV=production, DEBUG off);
* no literal secrets: secret-looking variables only take ${...} values without a default, no
  password in a URL, no API key, no private key; env files are ignored by git and docker;
* images of other services carry a version tag; built services have a Dockerfile;
* commands and health checks name files and modules that exist (manage.py, deploy/*.py,
  gunicorn's --config and WSGI module:attribute, celery's -A app);
* the split mcp service calls the web service's API over HTTP;
* .env.example has every variable the file requires, and placeholders the production profile
  refuses rather than secrets.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent

REQUIRED_SERVICES = {"db", "redis", "migrate", "web", "worker", "beat", "mcp"}
SECRET_NAME = re.compile(r"(SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|PRIVATE_KEY|CREDENTIAL)", re.I)
# A whole value that is one interpolation, e.g. ${POSTGRES_PASSWORD} or ${POSTGRES_PASSWORD:?set it}
PURE_REFERENCE = re.compile(r"^\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:?[-?+])?(?P<arg>[^}]*)\}$")
URL_WITH_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@'\"]*:(?P<pw>[^\s/@'\"]+)@", re.I)
API_KEY = re.compile(r"lev_sk_[A-Za-z0-9_-]{8,}")
PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
REQUIRED_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?\?[^}]*\}")
FALSE_VALUES = {"0", "false", "no", "off", ""}
PLACEHOLDER = re.compile(r"(REPLACE|CHANGE|EXAMPLE|PLACEHOLDER|django-insecure)", re.I)


class Checker:
    def __init__(self, compose_file: Path, project_dir: Path, env_example: Path):
        self.compose_file = compose_file
        self.project_dir = project_dir
        self.env_example = env_example
        self.problems: list[str] = []
        self.text = ""
        self.data: dict[str, Any] = {}

    def problem(self, message: str) -> None:
        self.problems.append(message)

    # -- helpers ----------------------------------------------------------------------------
    @property
    def services(self) -> dict[str, dict[str, Any]]:
        services = self.data.get("services")
        return services if isinstance(services, dict) else {}

    @staticmethod
    def environment(service: dict[str, Any]) -> dict[str, str]:
        env = service.get("environment") or {}
        if isinstance(env, list):
            pairs = (item.split("=", 1) if "=" in item else (item, "") for item in env)
            return {key: value for key, value in pairs}
        return {str(key): "" if value is None else str(value) for key, value in env.items()}

    @staticmethod
    def depends_on(service: dict[str, Any]) -> dict[str, str]:
        deps = service.get("depends_on") or {}
        if isinstance(deps, list):
            return dict.fromkeys(deps, "service_started")
        return {name: (spec or {}).get("condition", "service_started") for name, spec in deps.items()}

    @staticmethod
    def is_app(service: dict[str, Any]) -> bool:
        """Runs the Lev image (built from this repository)."""
        return "build" in service

    @staticmethod
    def argv_lists(value: Any) -> list[list[str]]:
        """A command or healthcheck test as argument lists; `sh -c STRING` is split once more."""
        if value is None:
            return []
        argv = shlex.split(value) if isinstance(value, str) else [str(item) for item in value]
        if argv and argv[0] in {"CMD", "CMD-SHELL", "NONE"}:
            kind, argv = argv[0], argv[1:]
            if kind == "CMD-SHELL":
                argv = ["sh", "-c", " ".join(argv)]
        lists = [argv]
        if len(argv) >= 3 and Path(argv[0]).name in {"sh", "bash"} and argv[1] == "-c":
            try:
                inner = shlex.split(argv[2].replace("$$", "$"))
            except ValueError:
                inner = []
            # Only the first pipeline element / command before || or && or | matters here.
            command: list[str] = []
            for token in inner:
                if token in {"||", "&&", "|", ";"} or token.startswith(">"):
                    break
                command.append(token)
            if command and command[0] == "exec":
                command = command[1:]
            lists.append(command)
        return lists

    # -- checks -----------------------------------------------------------------------------
    def load(self) -> bool:
        try:
            self.text = self.compose_file.read_text()
        except OSError as exc:
            self.problem(f"cannot read {self.compose_file}: {exc}")
            return False
        try:
            data = yaml.safe_load(self.text)
        except yaml.YAMLError as exc:
            self.problem(f"not valid YAML: {exc}")
            return False
        if not isinstance(data, dict) or not isinstance(data.get("services"), dict):
            self.problem("no `services` mapping")
            return False
        self.data = data
        return True

    def check_services_present(self) -> None:
        missing = REQUIRED_SERVICES - set(self.services)
        if missing:
            self.problem(f"services missing: {', '.join(sorted(missing))}")
        for name, image in (("db", "postgres:15"), ("redis", "redis:7")):
            got = str(self.services.get(name, {}).get("image", ""))
            if name in self.services and not got.startswith(image):
                self.problem(f"{name}: image {got!r} is not {image}")

    def check_healthchecks(self) -> None:
        waited_for_completion = {
            dep
            for service in self.services.values()
            for dep, condition in self.depends_on(service).items()
            if condition == "service_completed_successfully"
        }
        for name, service in self.services.items():
            health = service.get("healthcheck")
            if not isinstance(health, dict):
                self.problem(f"{name}: no healthcheck")
                continue
            test = health.get("test")
            disabled = health.get("disable") is True or (isinstance(test, list) and test[:1] == ["NONE"])
            if disabled:
                if name not in waited_for_completion:
                    self.problem(f"{name}: healthcheck disabled, but it is not a one-shot service that others "
                                 "wait for with service_completed_successfully")
                if str(service.get("restart", "no")) != "no":
                    self.problem(f"{name}: one-shot service must not restart (restart: \"no\")")
            elif not test:
                self.problem(f"{name}: healthcheck has no test")

    def check_migrate_ordering(self) -> None:
        migrate = self.services.get("migrate")
        if migrate is None:
            return
        commands = self.argv_lists(migrate.get("command"))
        if not any("manage.py" in argv and "migrate" in argv for argv in commands):
            self.problem("migrate: command does not run `manage.py migrate`")
        if self.depends_on(migrate).get("db") != "service_healthy":
            self.problem("migrate: does not wait for db to be healthy")
        for name, service in self.services.items():
            if name == "migrate" or not self.is_app(service):
                continue
            deps = self.depends_on(service)
            if deps.get("migrate") != "service_completed_successfully":
                self.problem(f"{name}: does not depend on migrate with condition service_completed_successfully")
            for backing in ("db", "redis"):
                if deps.get(backing) != "service_healthy":
                    self.problem(f"{name}: does not wait for {backing} to be healthy")
        for required in ("web", "worker"):
            if required in self.services and not self.is_app(self.services[required]):
                self.problem(f"{required}: does not run the Lev image (no build section)")

    def check_production_profile(self) -> None:
        for name, service in self.services.items():
            if not self.is_app(service):
                continue
            env = self.environment(service)
            if env.get("LEV_ENV", "").strip().lower() != "production":
                self.problem(f"{name}: LEV_ENV is not production")
            if env.get("DEBUG", "").strip().lower() not in FALSE_VALUES or "DEBUG" not in env:
                self.problem(f"{name}: DEBUG is not set off")
            env_files = service.get("env_file")
            if not env_files:
                self.problem(f"{name}: no env_file (settings and secrets come from .env)")

    def check_secrets(self) -> None:
        for name, service in self.services.items():
            for key, value in self.environment(service).items():
                if not SECRET_NAME.search(key) or value == "":
                    continue
                match = PURE_REFERENCE.match(value)
                if not match or match.group("op") in {"-", ":-", "+", ":+"}:
                    self.problem(f"{name}: {key} has a literal value; take it from .env as ${{{key}}}")
            env_files = service.get("env_file") or []
            for entry in [env_files] if isinstance(env_files, (str, dict)) else env_files:
                path = entry.get("path") if isinstance(entry, dict) else entry
                if path and Path(str(path)).name == ".env.example":
                    self.problem(f"{name}: env_file is the committed placeholder file .env.example")
                elif path:
                    self.check_ignored(Path(str(path)).name, f"{name}: env_file {path}")
        for lineno, line in enumerate(self.text.splitlines(), 1):
            stripped = line.split("#", 1)[0] if not line.lstrip().startswith("#") else line
            url = URL_WITH_PASSWORD.search(stripped)
            if url and not url.group("pw").startswith("${"):
                self.problem(f"line {lineno}: URL with a literal password")
            if API_KEY.search(line):
                self.problem(f"line {lineno}: literal API key")
            if PRIVATE_KEY.search(line):
                self.problem(f"line {lineno}: private key")

    def check_ignored(self, filename: str, what: str) -> None:
        for ignore_file in (".gitignore", ".dockerignore"):
            path = self.project_dir / ignore_file
            lines = path.read_text().splitlines() if path.exists() else []
            if filename not in {line.strip().lstrip("/") for line in lines}:
                self.problem(f"{what}: {filename} is not listed in {ignore_file}")

    def check_images(self) -> None:
        for name, service in self.services.items():
            if self.is_app(service):
                build = service["build"]
                context = build if isinstance(build, str) else (build or {}).get("context", ".")
                dockerfile = "Dockerfile" if isinstance(build, str) else (build or {}).get("dockerfile", "Dockerfile")
                if not (self.project_dir / context / dockerfile).is_file():
                    self.problem(f"{name}: build file {Path(context) / dockerfile} does not exist")
                continue
            image = str(service.get("image", ""))
            if not image:
                self.problem(f"{name}: neither image nor build")
            elif ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest"):
                self.problem(f"{name}: image {image!r} has no version tag")

    def check_references(self) -> None:
        for name, service in self.services.items():
            if not self.is_app(service):
                continue
            health = service.get("healthcheck") or {}
            for argv in self.argv_lists(service.get("command")) + self.argv_lists(service.get("entrypoint")) \
                    + self.argv_lists(health.get("test") if isinstance(health, dict) else None):
                self.check_argv(name, argv)

    def module_file(self, dotted: str) -> Path | None:
        base = self.project_dir.joinpath(*dotted.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def check_argv(self, name: str, argv: list[str]) -> None:
        if not argv:
            return
        program = Path(argv[0]).name
        for token in argv:
            is_file_argument = token.endswith(".py") and not token.startswith("-") and "$" not in token
            if is_file_argument and not (self.project_dir / token).is_file():
                self.problem(f"{name}: {token} does not exist")
        if program == "gunicorn":
            args = iter(argv[1:])
            for token in args:
                if token in {"-c", "--config"}:
                    path = next(args, "")
                    if not (self.project_dir / path).is_file():
                        self.problem(f"{name}: gunicorn config {path} does not exist")
                elif token.startswith("--config="):
                    if not (self.project_dir / token.split("=", 1)[1]).is_file():
                        self.problem(f"{name}: gunicorn config {token.split('=', 1)[1]} does not exist")
                elif ":" in token and not token.startswith("-"):
                    module, _, attribute = token.partition(":")
                    path = self.module_file(module)
                    if path is None:
                        self.problem(f"{name}: WSGI module {module} does not exist")
                    elif not re.search(rf"^{re.escape(attribute)}\s*=", path.read_text(), re.M):
                        self.problem(f"{name}: {module} defines no {attribute}")
        if program == "celery":
            app = None
            for index, token in enumerate(argv):
                if token in {"-A", "--app"} and index + 1 < len(argv):
                    app = argv[index + 1]
                elif token.startswith("--app="):
                    app = token.split("=", 1)[1]
            if app is None:
                self.problem(f"{name}: celery command without -A/--app")
            else:
                module = app.split(":", 1)[0]
                path = self.module_file(module)
                if path is None:
                    self.problem(f"{name}: celery app module {module} does not exist")
                elif "celery" not in path.read_text().lower():
                    self.problem(f"{name}: {path.relative_to(self.project_dir)} does not define a Celery app")

    def check_split_mcp(self) -> None:
        mcp = self.services.get("mcp")
        if mcp is None:
            return
        if "split" not in (mcp.get("profiles") or []):
            self.problem("mcp: not behind the `split` profile")
        if self.environment(mcp).get("LEV_API_BASE_URL") != "http://web:8000":
            self.problem("mcp: LEV_API_BASE_URL is not http://web:8000")
        if self.depends_on(mcp).get("web") != "service_healthy":
            self.problem("mcp: does not wait for web to be healthy")
        web = self.services.get("web", {})
        web_test = " ".join(str(part) for part in (web.get("healthcheck") or {}).get("test") or [])
        if "/health" not in web_test:
            self.problem("web: healthcheck does not call /health")

    def check_env_example(self) -> None:
        if not self.env_example.is_file():
            self.problem(f"{self.env_example} does not exist")
            return
        values: dict[str, str] = {}
        for line in self.env_example.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, _, value = line.partition("=")
                values[key.strip()] = value.strip()
        for variable in sorted(set(REQUIRED_VAR.findall(self.text))):
            if variable not in values:
                self.problem(f".env.example does not set {variable}, which docker-compose.yml requires")
        secret = values.get("SECRET_KEY")
        if secret is None:
            self.problem(".env.example does not set SECRET_KEY")
        elif len(secret) >= 50 and not secret.startswith("django-insecure"):
            self.problem(".env.example: SECRET_KEY looks real; use a placeholder the production profile refuses")
        for key, value in values.items():
            if SECRET_NAME.search(key) and value and not PLACEHOLDER.search(value):
                self.problem(f".env.example: {key} is not an obvious placeholder")
            url = URL_WITH_PASSWORD.search(value)
            if url and not PLACEHOLDER.search(url.group("pw")):
                self.problem(f".env.example: {key} has a password that is not an obvious placeholder")

    def run(self) -> int:
        if self.load():
            self.check_services_present()
            self.check_healthchecks()
            self.check_migrate_ordering()
            self.check_production_profile()
            self.check_secrets()
            self.check_images()
            self.check_references()
            self.check_split_mcp()
        self.check_env_example()
        for message in self.problems:
            print(f"FAIL {message}")
        if self.problems:
            print(f"{len(self.problems)} problem(s) in {self.compose_file}")
            return 1
        print(f"OK structural checks: {len(self.services)} services in {self.compose_file}")
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("compose_file", nargs="?", default=str(ROOT / "docker-compose.yml"))
    parser.add_argument("--project-dir", default=str(ROOT))
    parser.add_argument("--env-example", default=None)
    args = parser.parse_args(argv)
    project_dir = Path(args.project_dir).resolve()
    env_example = Path(args.env_example) if args.env_example else project_dir / ".env.example"
    return Checker(Path(args.compose_file), project_dir, env_example).run()


if __name__ == "__main__":
    sys.exit(main())
