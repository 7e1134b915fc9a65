"""Lenders' replies from IMAP mailboxes (docs/outreach.md): the site's (LEV_INBOUND_IMAP_HOST) and each
account's own (AccountMailbox, kept in the admin), polled by beat's `poll_inbound_mailbox` every
LEV_INBOUND_IMAP_POLL_SECONDS (lev/settings.py's CELERY_BEAT_SCHEDULE).

Each unseen message of the mailbox's folder is read without marking it (BODY.PEEK[]), goes through the
same function as the endpoint (deals.outreach.inbound.inbound_receive: matched and applied, or kept to
assign, once per Message-ID), and only then is flagged \\Seen. A message that is no readable email is
flagged \\Seen and \\Flagged (a person can look at it in the mailbox); a failure to keep one (the database
or the documents' storage down) leaves it unseen for the next poll, and stops this one.

The site's mailbox serves every account (the reply address's tag names the placement, and so the account).
An account's own mailbox is that account's alone: its messages are matched only to the account's own
emails (inbound_receive's `account`), and what each poll did is written on it in a sentence
(`last_result`) the admin shows. One mailbox failing (refused sign-in, no server) never stops the others.
imapclient speaks IMAP4rev1 over the standard library's imaplib and parses the answers for us.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass

from celery import shared_task
from django.conf import settings
from django.utils import timezone
from imapclient import IMAPClient
from imapclient.exceptions import LoginError
from imapclient.imapclient import FLAGGED, SEEN

from deals.outreach.inbound import inbound_receive
from deals.outreach.models import AccountMailbox
from lev.errors import UpstreamUnavailable, ValidationFailed
from lev.oauth.cimd import address_permitted

logger = logging.getLogger(__name__)

POLL_TASK = "deals.tasks.poll_inbound_mailbox"


@dataclass
class PollResult:
    kept: int = 0  # new replies kept (matched or to assign)
    duplicates: int = 0  # already kept (same Message-ID)
    unreadable: int = 0  # not an email: flagged in the mailbox

    def as_dict(self) -> dict[str, int]:
        return {"kept": self.kept, "duplicates": self.duplicates, "unreadable": self.unreadable}


@dataclass(frozen=True)
class Mailbox:
    host: str
    port: int
    ssl: bool
    username: str
    password: str
    folder: str


def site_mailbox() -> Mailbox | None:
    if not settings.LEV_INBOUND_IMAP_HOST:
        return None
    return Mailbox(settings.LEV_INBOUND_IMAP_HOST, settings.LEV_INBOUND_IMAP_PORT, settings.LEV_INBOUND_IMAP_SSL,
                   settings.LEV_INBOUND_IMAP_USER, settings.LEV_INBOUND_IMAP_PASSWORD, settings.LEV_INBOUND_IMAP_FOLDER)


def account_mailbox(found: AccountMailbox) -> Mailbox:
    return Mailbox(found.host, found.port, found.use_ssl, found.username, found.password, found.folder or "INBOX")


def poll_mailbox(mailbox: Mailbox | None = None, *, account=None) -> PollResult:
    """Read `mailbox`'s unseen messages (the site's by default; at most LEV_INBOUND_IMAP_BATCH), for
    `account` when it is that account's own. Connection and login failures raise (imapclient's and the
    socket's errors): the task logs them and beat tries again."""
    result = PollResult()
    mailbox = mailbox or site_mailbox()
    if mailbox is None:
        return result
    with IMAPClient(mailbox.host, port=mailbox.port, ssl=mailbox.ssl,
                    timeout=settings.LEV_INBOUND_IMAP_TIMEOUT_SECONDS) as client:
        client.login(mailbox.username, mailbox.password)
        client.select_folder(mailbox.folder)
        uids = sorted(client.search(["UNSEEN"]))[: settings.LEV_INBOUND_IMAP_BATCH]
        for uid in uids:
            fetched = client.fetch([uid], ["BODY.PEEK[]"]).get(uid, {})
            raw = fetched.get(b"BODY[]")
            if raw is None:  # expunged meanwhile
                continue
            try:
                received = inbound_receive(raw=bytes(raw), account=account)
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


def _failure(error: Exception) -> str:
    """What a person reads on the mailbox when a poll failed: what to check, never the server's words."""
    if isinstance(error, LoginError):
        return "The server refused the sign-in: check the username and password."
    if isinstance(error, UpstreamUnavailable):
        return "The replies could not be kept just now (the database or the documents' storage); they stay " \
               "unread for the next poll."
    if isinstance(error, OSError):
        return UNREACHABLE
    return "The mailbox answered in a way it should not (its folder may not exist): check the folder."


def _summary(result: PollResult) -> str:
    words = f"Signed in and kept {result.kept} new repl{'y' if result.kept == 1 else 'ies'}"
    if result.duplicates:
        words += f" ({result.duplicates} already kept)"
    if result.unreadable:
        words += f"; {result.unreadable} message{'s' if result.unreadable != 1 else ''} that are no email flagged"
    return words + "."


NOT_PUBLIC = ("The server's address is not a public one: an account's mailbox must be on the internet "
              "(ask the site's operator if yours is on a private network).")
UNREACHABLE = "The server could not be reached: check the host, the port and TLS."


def host_problem(mailbox: Mailbox) -> str | None:
    """Why an account's mailbox may not be connected to: its host resolves to no address, or to one that is
    not public (loopback, private, link-local, the cloud's metadata service: lev.oauth.cimd's rule) unless
    LEV_ACCOUNT_MAILBOX_PRIVATE_HOSTS. None when it may. (Checked before each connection; the IMAP library
    resolves the name again as it connects.)"""
    if settings.LEV_ACCOUNT_MAILBOX_PRIVATE_HOSTS:
        return None
    try:
        infos = socket.getaddrinfo(mailbox.host, mailbox.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return UNREACHABLE
    if not infos or not all(address_permitted(info[4][0]) for info in infos):
        return NOT_PUBLIC
    return None


def sign_in_problem(mailbox: Mailbox) -> str | None:
    """Sign in to an account's `mailbox` and open its folder, reading nothing: None when both work, else
    what to check, in a sentence (the admin says it on the mailbox's form)."""
    problem = host_problem(mailbox)
    if problem:
        return problem
    try:
        with IMAPClient(mailbox.host, port=mailbox.port, ssl=mailbox.ssl,
                        timeout=min(settings.LEV_INBOUND_IMAP_TIMEOUT_SECONDS, 10)) as client:
            client.login(mailbox.username, mailbox.password)
            client.select_folder(mailbox.folder, readonly=True)
    except (OSError, IMAPClient.Error) as error:
        return _failure(error)
    return None


def poll_account_mailboxes() -> PollResult:
    """Poll each enabled account mailbox in turn, writing on it what the poll did; one failing never
    stops the next."""
    total = PollResult()
    for found in AccountMailbox.objects.filter(enabled=True).select_related("account").order_by("id"):
        mailbox = account_mailbox(found)
        refused = host_problem(mailbox)
        if refused:
            AccountMailbox.objects.filter(pk=found.pk).update(last_polled_at=timezone.now(), last_result=refused)
            continue
        try:
            result = poll_mailbox(mailbox, account=found.account)
        except (OSError, IMAPClient.Error, UpstreamUnavailable) as error:
            logger.warning("account mailbox %s: could not poll: %s", found.pk, type(error).__name__)
            words = _failure(error)
        else:
            total.kept += result.kept
            total.duplicates += result.duplicates
            total.unreadable += result.unreadable
            words = _summary(result)
        AccountMailbox.objects.filter(pk=found.pk).update(last_polled_at=timezone.now(), last_result=words)
    return total


@shared_task(name=POLL_TASK, soft_time_limit=100, time_limit=110, ignore_result=True)
def poll_inbound_mailbox() -> dict[str, int]:
    """Beat's poll of the replies mailboxes, the site's and then the accounts'; safe to run twice (a kept
    message is seen, and kept once)."""
    site = PollResult()
    try:
        site = poll_mailbox()
    except (OSError, IMAPClient.Error, UpstreamUnavailable) as error:  # the mailbox or storage down: next poll
        logger.warning("inbound mailbox: could not poll: %s", type(error).__name__)
    accounts = poll_account_mailboxes()
    return {"kept": site.kept + accounts.kept, "duplicates": site.duplicates + accounts.duplicates,
            "unreadable": site.unreadable + accounts.unreadable}
