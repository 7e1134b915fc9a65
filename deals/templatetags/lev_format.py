"""Template filters for the admin's figures: {{ value|money }}, {{ value|percent }},
{{ value|multiple }}, {{ slug|enum_label }} (lev.formatting does the work)."""

from __future__ import annotations

from django import template

from lev import formatting

register = template.Library()

register.filter("money", formatting.money)
register.filter("percent", formatting.percent)
register.filter("multiple", formatting.multiple)
register.filter("enum_label", formatting.label)
