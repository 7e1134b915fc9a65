"""Showing what a client says about itself (its name, its hosts) to the person deciding whether to trust it."""

from django import template
from django.utils.html import format_html

from lev.oauth.registration import neutralise

register = template.Library()


@register.filter
def client_text(value) -> str:
    """The text without control and bidirectional formatting characters (a U+202E cannot reorder what the
    person reads), isolated in <bdi> so a right-to-left name cannot reorder the sentence around it."""
    return format_html("<bdi>{}</bdi>", neutralise(value if value is not None else ""))
