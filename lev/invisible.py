"""Characters that change how the text around them is shown instead of being shown themselves: one list
for every page that shows a person what someone else typed (the OAuth consent page's client names, the
admin's notes, descriptions and term sheets).

* `BIDI_CONTROLS` — the bidirectional formatting characters: U+202E RIGHT-TO-LEFT OVERRIDE makes
  "Evil\\u202Egpj.exe" read "Evilexe.jpg"; the isolates U+2066 to U+2069, the embeddings and overrides
  U+202A to U+202E, the marks U+200E, U+200F and U+061C.
* `INVISIBLE_FORMAT_CONTROLS` — those and the other invisible format characters that can hide or join
  what a reader sees: zero-width space, non-joiner and joiner (U+200B to U+200D), word joiner and the
  invisible operators (U+2060 to U+2064), the deprecated format characters (U+206A to U+206F) and the zero-width
  no-break space (U+FEFF).
* `LINE_SEPARATORS` — U+2028 and U+2029, which break a line where HTML shows none.

`without_invisible(text)` is the text as shown to a person: the format characters removed, a line or
paragraph separator turned into a space. lev.oauth.registration refuses the bidirectional ones in a
client's metadata; lev.admin_site takes them all out of every page the admin serves.
"""

from __future__ import annotations

import re

BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
INVISIBLE_FORMAT_CONTROLS = BIDI_CONTROLS | frozenset(
    "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\u206a\u206b\u206c\u206d\u206e\u206f\ufeff")
LINE_SEPARATORS = frozenset("\u2028\u2029")

_TABLE = {ord(char): None for char in INVISIBLE_FORMAT_CONTROLS} | {ord(char): " " for char in LINE_SEPARATORS}
# The same characters in UTF-8, for a page already rendered to bytes.
_UTF8 = re.compile(b"|".join(re.escape(char.encode()) for char in sorted(INVISIBLE_FORMAT_CONTROLS | LINE_SEPARATORS)))
_UTF8_SPACES = {char.encode() for char in LINE_SEPARATORS}


def without_invisible(text: str) -> str:
    """`text` as shown to a person (see the module docstring)."""
    return text.translate(_TABLE)


def without_invisible_utf8(content: bytes) -> bytes:
    """The same for UTF-8 bytes (a rendered page), unchanged and not copied when it holds none."""
    if _UTF8.search(content) is None:
        return content
    return _UTF8.sub(lambda found: b" " if found.group() in _UTF8_SPACES else b"", content)
