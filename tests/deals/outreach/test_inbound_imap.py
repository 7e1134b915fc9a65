"""The IMAP mailbox polled for replies, against a real IMAP server started here: a minimal IMAP4rev1
server on asyncio (LOGIN, SELECT, UID SEARCH UNSEEN, UID FETCH BODY.PEEK[], UID STORE +FLAGS, LOGOUT —
what imapclient speaks), over a real socket. Each unseen message goes through the endpoint's function and
is flagged seen only once kept; a message that is no email is flagged; the database down leaves it unseen."""

from __future__ import annotations

import asyncio
import re
import threading

import pytest

from deals.outreach.imap import poll_inbound_mailbox, poll_mailbox
from deals.outreach.models import InboundEmail
from deals.placements.models import Placement
from lev.errors import UpstreamUnavailable
from tests.deals.outreach.reply_helpers import emailed, private_storage_at, reply

USER, PASSWORD = "replies", "mailbox-password"


class Mailbox:
    """One folder of messages: {uid: [raw bytes, set of flags]}."""

    def __init__(self, messages: list[bytes]):
        self.messages = {uid: [raw, set()] for uid, raw in enumerate(messages, start=1)}
        self.commands: list[str] = []


class ImapServer:
    def __init__(self, mailbox: Mailbox):
        self.mailbox = mailbox
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._session, "127.0.0.1", 0))
        self.port = self.server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self):
        self.thread.start()
        self.ready.wait(10)
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        box = self.mailbox
        writer.write(b"* OK IMAP4rev1 test server ready\r\n")
        authenticated = False
        while line := await reader.readline():
            text = line.decode().rstrip("\r\n")
            tag, _, rest = text.partition(" ")
            command, _, args = rest.partition(" ")
            command = command.upper()
            if command == "UID":
                command, _, args = args.partition(" ")
                command = "UID " + command.upper()
            box.commands.append(command)
            out = []
            if command == "CAPABILITY":
                out.append(b"* CAPABILITY IMAP4rev1")
            elif command == "LOGIN":
                parts = [p.strip('"') for p in args.split(" ")]
                if parts != [USER, PASSWORD]:
                    writer.write(f"{tag} NO [AUTHENTICATIONFAILED] Invalid credentials\r\n".encode())
                    continue
                authenticated = True
            elif command == "LOGOUT":
                writer.write(f"* BYE logging out\r\n{tag} OK LOGOUT completed\r\n".encode())
                await writer.drain()
                break
            elif not authenticated:
                writer.write(f"{tag} NO not authenticated\r\n".encode())
                continue
            elif command in ("SELECT", "EXAMINE"):
                out += [f"* {len(box.messages)} EXISTS".encode(), b"* 0 RECENT",
                        b"* FLAGS (\\Seen \\Flagged)", b"* OK [UIDVALIDITY 1] UIDs valid"]
            elif command == "UID SEARCH":
                assert args.upper() == "UNSEEN", args
                unseen = [str(uid) for uid, (_raw, flags) in box.messages.items() if "\\Seen" not in flags]
                out.append(("* SEARCH " + " ".join(unseen)).rstrip().encode())
            elif command == "UID FETCH":
                uid_text, _, items = args.partition(" ")
                assert "BODY.PEEK[]" in items.upper(), items  # never a fetch that marks it seen
                uid = int(uid_text)
                raw, _flags = box.messages[uid]
                out.append(f"* {uid} FETCH (UID {uid} BODY[] {{{len(raw)}}}\r\n".encode() + raw + b")")
            elif command == "UID STORE":
                uid_text, _, change = args.partition(" ")
                uid = int(uid_text)
                assert change.upper().startswith("+FLAGS"), change
                box.messages[uid][1].update(re.findall(r"\\\w+", change))
                flags = " ".join(sorted(box.messages[uid][1]))
                out.append(f"* {uid} FETCH (UID {uid} FLAGS ({flags}))".encode())
            elif command != "NOOP":
                writer.write(f"{tag} BAD unknown command\r\n".encode())
                continue
            writer.write(b"".join(item + b"\r\n" for item in out) + f"{tag} OK {command} completed\r\n".encode())
            await writer.drain()
        writer.close()


@pytest.fixture
def mailbox_settings(settings, tmp_path, monkeypatch):
    private_storage_at(monkeypatch, tmp_path)
    settings.LEV_INBOUND_IMAP_SSL = False
    settings.LEV_INBOUND_IMAP_USER = USER
    settings.LEV_INBOUND_IMAP_PASSWORD = PASSWORD
    settings.LEV_INBOUND_IMAP_HOST = "127.0.0.1"
    settings.LEV_INBOUND_IMAP_TIMEOUT_SECONDS = 10
    return settings


@pytest.mark.django_db
def test_unseen_replies_are_kept_then_flagged_seen(mailbox_settings, account):
    email = emailed(account)
    stranger = reply(None, to="reply+nobody@r.lev.test").as_bytes()
    box = Mailbox([reply(email).as_bytes(), b"not an email at all\r\n", stranger])
    box.messages[3][1].add("\\Seen")  # already read by someone: left alone
    with ImapServer(box) as server:
        mailbox_settings.LEV_INBOUND_IMAP_PORT = server.port
        result = poll_mailbox()
        assert result.as_dict() == {"kept": 1, "duplicates": 0, "unreadable": 1}
        assert box.messages[1][1] == {"\\Seen"} and box.messages[2][1] == {"\\Seen", "\\Flagged"}
        assert InboundEmail.objects.get().placement_id == email.placement_id
        assert Placement.objects.get(pk=email.placement_id).status == "reviewing"
        box.messages[1][1].clear()  # marked unread again in a mail client: polled again, kept once
        assert poll_mailbox().as_dict() == {"kept": 0, "duplicates": 1, "unreadable": 0}
        assert InboundEmail.objects.count() == 1
        assert "LOGOUT" in box.commands


@pytest.mark.django_db
def test_wrong_password_and_no_server_are_logged_not_raised(mailbox_settings, account):
    with ImapServer(Mailbox([])) as server:
        mailbox_settings.LEV_INBOUND_IMAP_PORT = server.port
        mailbox_settings.LEV_INBOUND_IMAP_PASSWORD = "wrong"
        assert poll_inbound_mailbox() == {"kept": 0, "duplicates": 0, "unreadable": 0}
    mailbox_settings.LEV_INBOUND_IMAP_PORT = server.port  # the server is stopped: connection refused
    assert poll_inbound_mailbox() == {"kept": 0, "duplicates": 0, "unreadable": 0}


@pytest.mark.django_db
def test_a_message_not_kept_stays_unseen(mailbox_settings, account, tmp_path, monkeypatch):
    """Keeping fails for real (the private storage cannot write: its folder is a file), so the message
    stays unseen for the next poll, and nothing is half kept."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_bytes(b"")
    private_storage_at(monkeypatch, blocked / "inside")
    box = Mailbox([reply(None, to="reply+nobody@r.lev.test").as_bytes()])  # to assign: its message is stored
    with ImapServer(box) as server:
        mailbox_settings.LEV_INBOUND_IMAP_PORT = server.port
        with pytest.raises(UpstreamUnavailable):
            poll_mailbox()
        assert box.messages[1][1] == set()  # not seen: the next poll reads it again
        assert poll_inbound_mailbox() == {"kept": 0, "duplicates": 0, "unreadable": 0}  # beat's: logged
        assert box.messages[1][1] == set()
    assert InboundEmail.objects.count() == 0
