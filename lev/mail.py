"""The mail backend of the embedded default (no EMAIL_HOST): accepts every message and keeps none.

`make run` never needs a mail server: the outbox is the product's own record of what it sent
(deals.outreach's OutboundEmail rows, shown in the admin), so this backend only has to say "delivered".
Django's locmem backend would do the same but keeps every message in a list of the process for ever
(it is meant for tests), which a long-running `make run` should not grow.
"""

from __future__ import annotations

from django.core.mail.backends.base import BaseEmailBackend


class OutboxOnlyBackend(BaseEmailBackend):
    def send_messages(self, email_messages) -> int:
        messages = list(email_messages or [])
        for message in messages:
            message.message()  # written as SMTP would: a header with a line break raises BadHeaderError
        return len(messages)
