"""Benchmark: a document's upload through the REST view, streamed, with memory that does not grow with the
file (issue 41). 10 MB and 100 MB (--sizes), each in a fresh process:

    .venv/bin/python bench/documents_upload.py             # SQLite file under bench/results/
    DATABASE_URL=postgres://... .venv/bin/python bench/documents_upload.py

Each upload is a real multipart body, written to a temporary file first and handed to the site's WSGI
application (lev.wsgi.application: the production guards, middleware, authentication, DRF, the view) as
its `wsgi.input`, read from disk as a server would read it from the socket: the body is never whole in
memory on the client's side either. The child process reports the upload's wall time, its Python
allocations' peak (tracemalloc) and the process's peak RSS (resource.getrusage's ru_maxrss) before and
after the request: both stay flat while the file grows tenfold (the upload handler spools every file part
to disk, the sniffing, sha256 and size are computed over 64 KiB chunks, and the file-system storage
moves the temporary file into place).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`
from bench._django import RESULTS, setup

MB = 1024 * 1024
BOUNDARY = "lev-bench-boundary"


def prepare(workdir: Path) -> dict:
    """Migrate this run's database and make a member, an API key and a deal (the parent, once)."""
    from django.core.management import call_command

    from lev.accounts.services import api_key_create
    from tests.factories import AccountFactory, DealFactory, MembershipFactory, UserFactory

    call_command("migrate", verbosity=0)
    account = AccountFactory(name="Bench Capital", slug=f"bench-{os.getpid()}")
    user = MembershipFactory(account=account, user=UserFactory(username=f"bench{os.getpid()}")).user
    _key, raw = api_key_create(user=user, account=account, name="bench")
    deal = DealFactory(account=account)
    return {"key": raw, "deal": deal.pk}


def write_body(path: Path, size: int) -> int:
    """A multipart body with one file part of `size` bytes (a PDF header, then pseudo-random bytes)."""
    head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"kind\"\r\n\r\noffering_memorandum\r\n"
            f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"om.pdf\"\r\n"
            "Content-Type: application/pdf\r\n\r\n").encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    block = os.urandom(MB)
    with path.open("wb") as out:
        out.write(head)
        out.write(b"%PDF-1.7\n")
        left = size - 9
        while left > 0:
            out.write(block[:min(MB, left)])
            left -= MB
        out.write(tail)
    return path.stat().st_size


def child(args) -> None:
    """One upload in this fresh process; prints one JSON line."""
    import tracemalloc

    from lev.wsgi import application

    body = Path(args.body)
    status = {}

    def start_response(line, headers, exc_info=None):
        status["line"] = line

    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": f"/api/v1/deals/{args.deal}/documents/",
               "SERVER_NAME": "testserver", "SERVER_PORT": "80", "HTTP_HOST": "testserver",
               "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr, "wsgi.multithread": False,
               "CONTENT_TYPE": f"multipart/form-data; boundary={BOUNDARY}", "CONTENT_LENGTH": str(body.stat().st_size),
               "HTTP_AUTHORIZATION": f"Bearer {args.key}"}
    # A warm-up request (no body) so imports and first-use caches are not counted in the upload.
    warm = {**environ, "REQUEST_METHOD": "GET", "CONTENT_LENGTH": "0", "CONTENT_TYPE": ""}
    with open(os.devnull, "rb") as nothing:
        b"".join(application({**warm, "wsgi.input": nothing}, start_response))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    started = time.perf_counter()
    with body.open("rb") as stream:
        answer = b"".join(application({**environ, "wsgi.input": stream}, start_response))
    seconds = time.perf_counter() - started
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    document = json.loads(answer)
    print(json.dumps({"status": status["line"], "seconds": round(seconds, 2), "size": document["current"]["size"],
                      "tracemalloc_peak_kib": peak // 1024, "rss_before_kib": rss_before,
                      "rss_after_kib": rss_after}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,100", help="file sizes in MB, comma-separated")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--body", help=argparse.SUPPRESS)
    parser.add_argument("--key", help=argparse.SUPPRESS)
    parser.add_argument("--deal", help=argparse.SUPPRESS)
    args = parser.parse_args()
    workdir = Path(os.environ.setdefault("LEV_BENCH_DOCUMENTS_WORKDIR", tempfile.mkdtemp(prefix="lev-docs-bench-")))
    os.environ.setdefault("LEV_DOCUMENTS_DIR", str(workdir / "documents"))
    setup(sqlite_file="documents_upload.sqlite3", unthrottled=True)
    if args.child:
        child(args)
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    made = prepare(workdir)
    print(f"{'file':>8} {'status':>12} {'seconds':>8} {'tracemalloc peak':>17} {'peak RSS before':>16} "
          f"{'peak RSS after':>15}")
    for size in (int(s) for s in args.sizes.split(",")):
        body = workdir / f"body-{size}.bin"
        write_body(body, size * MB)
        done = subprocess.run([sys.executable, __file__, "--child", "--body", str(body), "--key", made["key"],
                               "--deal", str(made["deal"])], capture_output=True, text=True, env=os.environ)
        body.unlink()
        if done.returncode != 0:
            sys.exit(done.stderr[-3000:])
        row = json.loads(done.stdout.strip().splitlines()[-1])
        assert row["size"] == size * MB, row
        print(f"{size:>5} MB {row['status']:>12} {row['seconds']:>8} {row['tracemalloc_peak_kib'] / 1024:>14.1f} MB "
              f"{row['rss_before_kib'] / 1024:>13.1f} MB {row['rss_after_kib'] / 1024:>12.1f} MB")


if __name__ == "__main__":
    main()
