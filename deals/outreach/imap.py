"""Lenders' replies from an IMAP mailbox (docs/outreach.md), for a site that prefers a mailbox to the
signed endpoint: beat runs `poll_inbound_mailbox` every LEV_INBOUND_IMAP_POLL_SECONDS when
LEV_INBOUND_IMAP_HOST is set (lev/settings.py's CELERY_BEAT_SCHEDULE).

Each unseen message of LEV_INBOUND_IMAP_FOLDER is read without marking it (BODY.PEEK[]), goes through
the same function as the endpoint (deals.outreach.inbound.inbound_receive: matched and applied, or kept
to assign, once per Message-ID), and only then is flagged \\Seen. A message that is no readable email is
flagged \\Seen and \\Flagged (a person can look at it in the mailbox); a failure to keep one (the database
or the documents' storage down) leaves it unseen for the next poll, and stops this one.

One site-level mailbox: the reply address's tag names the placement and so the account, so one mailbox
serves every account. (An account-level mailbox would need its credentials kept per account: not built.)
imapclient speaks IMAP4rev1 over the standard library's imaplib and parses the answers for us.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from celery import shared_task
from django.conf import settings
from imapclient import IMAPClient
from imapclient.imapclient import FLAGGED, SEEN

from deals.outreach.inbound import inbound_receive
from lev.errors import UpstreamUnavailable, ValidationFailed

logger = logging.getLogger(__name__)

POLL_TASK = "deals.tasks.poll_inbound_mailbox"


@dataclass
class PollResult:
    kept: int = 0  # new replies kept (matched or to assign)
    duplicates: int = 0  # already kept (same Message-ID)
    unreadable: int = 0  # not an email: flagged in the mailbox

    def as_dict(self) -> dict[str, int]:
        return {"kept": self.kept, "duplicates": self.duplicates, "unreadable": self.unreadable}


def poll_mailbox() -> PollResult:
    """Read the configured mailbox's unseen messages (at most LEV_INBOUND_IMAP_BATCH). Connection and
    login failures raise (imapclient's and the socket's errors): the task logs them and beat tries again."""
    result = PollResult()
    if not settings.LEV_INBOUND_IMAP_HOST:
        return result
    with IMAPClient(settings.LEV_INBOUND_IMAP_HOST, port=settings.LEV_INBOUND_IMAP_PORT,
                    ssl=settings.LEV_INBOUND_IMAP_SSL, timeout=settings.LEV_INBOUND_IMAP_TIMEOUT_SECONDS) as client:
        client.login(settings.LEV_INBOUND_IMAP_USER, settings.LEV_INBOUND_IMAP_PASSWORD)
        client.select_folder(settings.LEV_INBOUND_IMAP_FOLDER)
        uids = sorted(client.search(["UNSEEN"]))[: settings.LEV_INBOUND_IMAP_BATCH]
        for uid in uids:
            fetched = client.fetch([uid], ["BODY.PEEK[]"]).get(uid, {})
            raw = fetched.get(b"BODY[]")
            if raw is None:  # expunged meanwhile
                continue
            try:
                received = inbound_receive(raw=bytes(raw))
            except ValidationFailed:
                logger.warning("inbound mailbox: message %s is not a readable email; flagged", uid)
                client.add_flags([uid], [SEEN, FLAGGED])
                result.unreadable += 1
                continue
            client.add_flags([uid], [SEEN])  # only now: it is kept
            if received.created:
                result.kept += 1
            else:
                result.duplicates += 1
    return result


@shared_task(name=POLL_TASK, soft_time_limit=100, time_limit=110, ignore_result=True)
def poll_inbound_mailbox() -> dict[str, int]:
    """Beat's poll of the inbound mailbox; safe to run twice (a kept message is seen, and kept once)."""
    try:
        return poll_mailbox().as_dict()
    except (OSError, IMAPClient.Error, UpstreamUnavailable) as error:  # the mailbox or storage down: next poll
        logger.warning("inbound mailbox: could not poll: %s", type(error).__name__)
        return {"kept": 0, "duplicates": 0, "unreadable": 0}
