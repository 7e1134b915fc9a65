"""Reading a document version's figures and applying them to its deal (docs/documents.md).

`figures_read(version=…)` reads the stored file through the storage API and keeps the result on the
version (`extracted`); `figures_apply(deal=…, version=…, fields=…, user=…)` writes the chosen figures to
the deal in one transaction under the deal's row lock (as every deal write: deals.services._lock_deal),
bumps the deal's version when a value changed (a lender search of the old figures is not reused), and
records each applied figure's source (FigureSource, one per deal and field: a later apply replaces it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils import timezone

from deals.documents.figures import KINDS, read_figures
from deals.documents.figures.grid import FileUnreadable
from deals.documents.figures.models import FIGURE_TARGETS, FigureSource
from deals.documents.models import DocumentVersion
from deals.models import Deal, DealFinancials, DealProperty
from deals.services import _bump_version, _check_not_archived, _lock_deal
from lev import limits
from lev.errors import ValidationFailed

# The kinds of document figures are read from; "other" and "financial_statement" are tried as either.
READABLE_KINDS = {"rent_roll": "rent_roll", "t12": "t12", "other": None, "financial_statement": None}
# An apply naming a figure the document does not give (a rule over the body and the document read).
NOT_GIVEN = "not a figure of this"
_BOUNDS: dict[str, tuple[Decimal, Decimal]] = {
    "in_place_noi": (-limits.MONEY_MAX, limits.MONEY_MAX),
    "effective_gross_income": (-limits.MONEY_MAX, limits.MONEY_MAX),
    "operating_expenses": (-limits.MONEY_MAX, limits.MONEY_MAX),
    "in_place_rent": (Decimal(0), limits.MONEY_MAX),
    "occupancy": (Decimal(0), Decimal(100)),
    "units": (Decimal(1), Decimal(limits.UNITS_MAX)),
}


def figures_read(*, version: DocumentVersion) -> dict[str, Any]:
    """Read the version's file as a rent roll or T-12 (by its document's kind), store the result on the
    version and return it. ValidationFailed (naming `file`) when the document is not of a kind figures
    are read from, or its file is not a readable rent roll or T-12 (the message says what was looked for)."""
    kind = version.document.kind
    if kind not in READABLE_KINDS:
        raise ValidationFailed({"file": [f"figures are read from a rent roll or a T-12 (XLSX or CSV); this document "
                                         f"is {'an' if kind[0] in 'aeiou' else 'a'} {kind.replace('_', ' ')}"]})
    try:
        with version.file.open("rb") as file:
            data = file.read(limits.FIGURES_FILE_MAX_BYTES + 1)
    except OSError:
        raise ValidationFailed({"file": ["the document's file cannot be read from the storage"]}) from None
    try:
        result = read_figures(data, version.file_name, READABLE_KINDS[kind])
    except FileUnreadable as exc:
        raise ValidationFailed({"file": [str(exc)]}) from None
    version.extracted = result
    version.save(update_fields=["extracted"])
    return result


def current_values(*, deal: Deal) -> dict[str, Decimal | int | None]:
    """The deal's value of each field a figure may be applied to (units: its one property's, else None)."""
    financials = DealFinancials.objects.filter(deal=deal).first()
    values: dict[str, Decimal | int | None] = {
        name: getattr(financials, name, None) if financials else None for name in FIGURE_TARGETS if name != "units"}
    properties = list(DealProperty.objects.filter(deal=deal).values_list("units", flat=True)[:2])
    values["units"] = properties[0] if len(properties) == 1 else None
    return values


@dataclass
class Applied:
    applied: dict[str, Decimal] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    financials: DealFinancials | None = None


def applicable(extracted: dict[str, Any] | None) -> dict[str, str]:
    """The fields the reading gives a figure for: field -> the figure's decimal string."""
    if not extracted or extracted.get("kind") not in KINDS:
        return {}
    figures = extracted.get("figures") or {}
    return {name: figures[key] for name, (kind, key) in FIGURE_TARGETS.items()
            if kind == extracted["kind"] and key in figures}


@transaction.atomic
def figures_apply(*, deal: Deal, version: DocumentVersion, fields: list[str] | None, user) -> Applied:
    """Write the version's figures named in `fields` (None: every one it gives) to `deal` (the version's),
    each recorded as a FigureSource. `units` goes to the deal's property when it has exactly one; with
    `fields=None` it is otherwise skipped (and said), named explicitly it is refused. Reads the file first
    when it was not read yet. Everything or nothing: any refusal leaves the deal as it was."""
    _lock_deal(deal)
    _check_not_archived(deal, "changed")
    if version.extracted is None:
        figures_read(version=version)
    given = applicable(version.extracted)
    if not given:
        raise ValidationFailed({"file": ["no figures were read from this version; its preview says why"]})
    result = Applied()
    if fields is None:
        chosen = list(given)
    else:
        unknown = [name for name in fields if name not in given]
        if unknown:
            kind = "rent roll" if version.extracted["kind"] == "rent_roll" else "T-12"
            raise ValidationFailed({"fields": [f"{', '.join(unknown)}: {NOT_GIVEN} {kind}; it gives "
                                               f"{', '.join(given)}"]})
        chosen = list(dict.fromkeys(fields))
    values: dict[str, Decimal] = {}
    problems: dict[str, list[str]] = {}
    prop = None
    for name in chosen:
        try:
            value = Decimal(given[name])
        except (InvalidOperation, TypeError):
            problems.setdefault("fields", []).append(f"{name}: the figure read is not a number")
            continue
        low, high = _BOUNDS[name]
        if not low <= value <= high:
            reason = f"{name}: {value} is outside what the deal records ({low} to {high})"
            if fields is None and name == "units":
                result.skipped[name] = reason
                continue
            problems.setdefault("fields", []).append(reason)
            continue
        if name == "units":
            properties = list(DealProperty.objects.select_for_update().filter(deal=deal)[:2])
            if len(properties) != 1:
                reason = ("units: the deal has no property to put them on; add its property first" if not properties
                          else "units: the deal has several properties; set each one's units on the property")
                if fields is None:
                    result.skipped[name] = reason
                    continue
                problems.setdefault("fields", []).append(reason)
                continue
            prop = properties[0]
        values[name] = value
    if problems:
        raise ValidationFailed(problems)
    if not values:
        raise ValidationFailed({"fields": ["no figure of this version can be applied to the deal: "
                                           + "; ".join(result.skipped.values())]})
    financials, _ = DealFinancials.objects.select_for_update().get_or_create(deal=deal)
    changed = [name for name, value in values.items()
               if name != "units" and getattr(financials, name) != value]
    for name in changed:
        setattr(financials, name, values[name])
    if changed:
        financials.save(update_fields=[*changed, "updated_at"])
    units_changed = prop is not None and prop.units != int(values["units"])
    if units_changed:
        prop.units = int(values["units"])
        prop.save(update_fields=["units", "updated_at"])
    if changed or units_changed:
        _bump_version(deal)
    now = timezone.now()
    for name, value in values.items():
        FigureSource.objects.update_or_create(deal=deal, field=name, defaults={
            "value": value, "document_version": version, "applied_by": user if getattr(user, "pk", None) else None,
            "applied_at": now})
    financials.deal = deal
    result.applied, result.financials = values, financials
    return result

