"""Lender names as people write them, matched to lenders: never guessed silently.

Each distinct name of a file is resolved once, in this order:

1. a mapping the user gave (`--map "JP Morgan=12"` or a mapping file): that lender, whatever the name;
2. the same name once normalised (case, punctuation, "&"/"and", and suffixes such as Inc., LLC, N.A.,
   Bank, Corporation dropped): exactly one lender with it is the match;
3. rapidfuzz's WRatio over the normalised names: the best lender when it scores at least
   `FUZZY_THRESHOLD` and leads the next one by `FUZZY_MARGIN` ("JP Morgan" -> "JPMorgan Chase Bank").

A name that matches no lender, or two or more equally well ("Chase" when the directory has two Chases),
is `unresolved`, with the candidates, for the user to map; a fuzzy match is shown in the plan with its
score, so the user sees every name that was not written exactly. rapidfuzz was chosen for its speed
(C++), its maintained scorers and MIT licence: docs/import-export.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from lenders.models import Lender
from lenders.selectors import visible

FUZZY_THRESHOLD = 88
FUZZY_MARGIN = 4
CANDIDATES_SHOWN = 3
_SUFFIXES = re.compile(
    r"\b(inc|incorporated|llc|l l c|lp|llp|ltd|limited|corp|corporation|co|company|n a|na|plc|group|holdings|"
    r"the|bank|national association|financial|capital|lending)\b")


def _score(a: str, b: str, **kwargs) -> float:
    """WRatio of the names as written and with their spaces dropped ("jp morgan" is "jpmorgan")."""
    return max(fuzz.WRatio(a, b, **kwargs), fuzz.WRatio(a.replace(" ", ""), b.replace(" ", ""), **kwargs))


def normalise(name: str) -> str:
    text = name.lower().replace("&", " and ")
    text = re.sub(r"[^a-z0-9]+", " ", text)
    stripped = " ".join(_SUFFIXES.sub(" ", text).split())
    return stripped or " ".join(text.split())


@dataclass
class Resolution:
    name: str
    lender_id: int | None = None
    lender_name: str = ""
    how: str = ""  # "id", "mapped", "exact", "fuzzy 92"
    candidates: list[tuple[int, str]] = field(default_factory=list)


class LenderMatcher:
    """The lenders an account may place with, and the names of a file resolved against them."""

    def __init__(self, *, lenders: dict[int, str], mapping: dict[str, int] | None = None,
                 new_ids: set[int] | None = None, directory: set[int] | None = None) -> None:
        self.lenders = lenders
        self.directory = directory if directory is not None else set(lenders)  # ids of the directory's lenders
        self.new_ids = new_ids or set()  # the import's own new lenders (--new-lender): said so in the plan
        self.mapping = {" ".join(k.lower().split()): v for k, v in (mapping or {}).items()}
        self.by_normal: dict[str, list[int]] = {}
        for pk, name in lenders.items():
            self.by_normal.setdefault(normalise(name), []).append(pk)
        self.choices = {pk: normalise(name) for pk, name in lenders.items()}
        self.cache: dict[str, Resolution] = {}

    @classmethod
    def for_account(cls, account, mapping: dict[str, int] | None = None, *,
                    new_ids: set[int] | None = None) -> LenderMatcher:
        # The lenders the account can place with: the directory's and its own, never another account's
        # (an id or a name of theirs matches nothing here, as if it did not exist).
        rows = Lender.objects.filter(visible(account.pk)).values_list("pk", "name", "account_id")
        lenders, directory = {}, set()
        for pk, name, owner in rows:
            lenders[pk] = name
            if owner is None:
                directory.add(pk)
        return cls(lenders=lenders, mapping=mapping, new_ids=new_ids, directory=directory)

    def add(self, pk: int, name: str, *, new: bool = False) -> None:
        """A lender added during the import (the team's own, from the file): the file's names match it."""
        self.lenders[pk] = name
        self.by_normal.setdefault(normalise(name), []).append(pk)
        self.choices[pk] = normalise(name)
        if new:
            self.new_ids.add(pk)
        self.cache.clear()

    def by_id(self, lender_id: int) -> Resolution:
        name = self.lenders.get(lender_id)
        return Resolution(str(lender_id), lender_id if name else None, name or "", "id" if name else "")

    def resolve(self, name: str) -> Resolution:
        key = " ".join(name.lower().split())
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = self._resolve(name, key)
        return found

    def _resolve(self, name: str, key: str) -> Resolution:
        if key in self.mapping:
            pk = self.mapping[key]
            return Resolution(name, pk, self.lenders.get(pk, ""), "mapped")
        exact = self.by_normal.get(normalise(name), [])
        if len(exact) == 1:
            return Resolution(name, exact[0], self.lenders[exact[0]],
                              "new lender of your own" if exact[0] in self.new_ids else "exact")
        if len(exact) > 1:
            return Resolution(name, candidates=[(pk, self.lenders[pk]) for pk in exact[:CANDIDATES_SHOWN]])
        scored = process.extract(normalise(name), self.choices, scorer=_score, limit=CANDIDATES_SHOWN,
                                 score_cutoff=60)
        candidates = [(pk, self.lenders[pk]) for _choice, _score, pk in scored]
        if scored and scored[0][1] >= FUZZY_THRESHOLD and (
                len(scored) == 1 or scored[0][1] - scored[1][1] >= FUZZY_MARGIN):
            pk = scored[0][2]
            return Resolution(name, pk, self.lenders[pk], f"fuzzy {scored[0][1]:.0f}")
        return Resolution(name, candidates=candidates)


def parse_mapping(items: list[str]) -> dict[str, int]:
    """`"JP Morgan=12"` items (the command's --map, a mapping file's lines) as name -> lender id;
    ValueError naming the item that is not of that form."""
    mapping: dict[str, int] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or not name.strip() or not value.strip().isdigit():
            raise ValueError(f'"{item}" is not NAME=LENDER_ID (e.g. "JP Morgan=12")')
        mapping[name.strip()] = int(value.strip())
    return mapping
