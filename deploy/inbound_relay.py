"""An SMTP relay for lenders' replies: each message it receives is POSTed, signed, to Lev's inbound
endpoint (docs/outreach.md). Point the reply domain's MX (or your mail service's forward) at it.

    LEV_INBOUND_URL=https://lev.example.com/api/v1/inbound-email/ \
    LEV_INBOUND_EMAIL_SECRET=... python deploy/inbound_relay.py --host 0.0.0.0 --port 2525

Standalone: the standard library and aiosmtpd only (no Django), so it can run on a mail host of its own.
What the SMTP client hears, from Lev's answer:
* 2xx (kept, or already kept) -> 250: the message is Lev's;
* 413 -> 552 (too large), 400/415 -> 554 (not a readable message): refused for good, the sender is told;
* anything else (401: a secret out of step; 503: not configured or a dependency down; Lev unreachable)
  -> 451: the sending server keeps the message and tries again later, so nothing is lost.
Every envelope recipient is added as a Delivered-To header, so a reply that reached the reply address
only by Bcc is still matched.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import logging
import os
import time
import urllib.error
import urllib.request

from aiosmtpd.controller import Controller

logger = logging.getLogger("lev.inbound_relay")

TIMEOUT_SECONDS = 30.0


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """X-Lev-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>." + body)> (deals.outreach.inbound_api)."""
    return "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def post(url: str, secret: str, body: bytes, *, timeout: float = TIMEOUT_SECONDS) -> int:
    """POST `body` signed now; Lev's HTTP status, or 0 when Lev could not be reached."""
    timestamp = str(int(time.time()))
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "message/rfc822", "X-Lev-Timestamp": timestamp,
        "X-Lev-Signature": sign(secret, timestamp, body)})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except (urllib.error.URLError, OSError) as error:
        logger.warning("inbound relay: Lev unreachable: %s", error)
        return 0


def smtp_reply(status: int) -> str:
    if 200 <= status < 300:
        return "250 2.0.0 Delivered to Lev"
    if status == 413:
        return "552 5.3.4 Message too large"
    if status in (400, 415):
        return "554 5.6.0 The message could not be read"
    return "451 4.3.0 Temporarily unable to deliver; try again later"


class InboundRelay:
    """aiosmtpd handler: every message to Lev's endpoint."""

    def __init__(self, url: str, secret: str, *, timeout: float = TIMEOUT_SECONDS):
        if not url or not secret:
            raise ValueError("LEV_INBOUND_URL and LEV_INBOUND_EMAIL_SECRET must both be set")
        self.url, self.secret, self.timeout = url, secret, timeout

    async def handle_DATA(self, server, session, envelope) -> str:
        content = envelope.original_content or envelope.content or b""
        if isinstance(content, str):
            content = content.encode("utf-8", "surrogateescape")
        delivered = b"".join(b"Delivered-To: " + rcpt.encode("ascii", "replace") + b"\r\n"
                             for rcpt in envelope.rcpt_tos)
        body = delivered + content
        status = await asyncio.get_running_loop().run_in_executor(
            None, lambda: post(self.url, self.secret, body, timeout=self.timeout))
        logger.info("inbound relay: %s -> Lev %s", envelope.mail_from, status or "unreachable")
        return smtp_reply(status)


def relay_controller(*, url: str, secret: str, host: str = "127.0.0.1", port: int = 2525,
                     max_bytes: int = 25 * 1024 * 1024) -> Controller:
    """A started-when-you-call-start() SMTP server relaying to `url`."""
    return Controller(InboundRelay(url, secret), hostname=host, port=port, data_size_limit=max_bytes)


def main() -> None:  # pragma: no cover - the production entry point
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default=os.environ.get("LEV_INBOUND_RELAY_HOST", "0.0.0.0"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("LEV_INBOUND_RELAY_PORT", "2525")))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    controller = relay_controller(url=os.environ.get("LEV_INBOUND_URL", ""),
                                  secret=os.environ.get("LEV_INBOUND_EMAIL_SECRET", ""),
                                  host=args.host, port=args.port,
                                  max_bytes=int(os.environ.get("LEV_INBOUND_EMAIL_MAX_BYTES", 25 * 1024 * 1024)))
    controller.start()
    logger.info("inbound relay listening on %s:%s", args.host, args.port)
    try:
        asyncio.run(asyncio.Event().wait())
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
