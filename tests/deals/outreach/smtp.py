"""A real SMTP server for outreach's tests: aiosmtpd's Controller on a free port of 127.0.0.1, in a
thread of the test process, keeping every message that crossed it. Addresses in `refuse` are answered
550 at RCPT TO (a recipient refused for good); `stop()` closes the port (the server down) and `start()`
opens it again on the same port."""

from __future__ import annotations

import email
import email.policy
import socket
from dataclasses import dataclass, field

import pytest
from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    message: email.message.EmailMessage

    def __getitem__(self, header: str) -> str | None:
        return self.message[header]

    @property
    def text(self) -> str:
        part = self.message.get_body(preferencelist=("plain",))
        return part.get_content() if part is not None else ""


@dataclass
class Handler:
    refuse: set[str] = field(default_factory=set)
    messages: list[Received] = field(default_factory=list)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower() in self.refuse:
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos), parsed))
        return "250 Message accepted for delivery"


class SmtpServer:
    def __init__(self) -> None:
        self.port = free_port()
        self.handler = Handler()
        self.controller: Controller | None = None

    @property
    def messages(self) -> list[Received]:
        return self.handler.messages

    def to(self, address: str) -> list[Received]:
        return [m for m in self.messages if address in m.rcpt_tos]

    def start(self) -> None:
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


@pytest.fixture
def smtp(settings):
    """The SMTP server, started, and Django's email settings pointing at it."""
    server = SmtpServer()
    server.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_TIMEOUT = 5
    yield server
    server.stop()
