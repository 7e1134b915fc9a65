"""The pipeline: each account's ordered deal stages, and the record of every stage change.

A stage's `key` is its role: the seven default stages (lev.enums.DEFAULT_STAGES) carry one, stable
whatever an admin renames them to, so the automatic moves (a lender search starts → "in_market", a
winning quote → "closing") find their stage by it. Stages an admin adds carry none (""), are never
the target of an automatic move, and take part in the order like any other. Stages are never deleted:
deals and their history point at them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone

from lev import limits
from lev.enums import DEFAULT_STAGES, STAGE_KEYS, STAGE_KINDS, choices

# --- what "active" means -------------------------------------------------------------------------------
# One definition for every door (the home page, the admin lists and their filters, REST, MCP): a deal
# is ACTIVE when it is being worked — not archived, and in an `open` stage (not closed, not dead).
_STATUS_KIND = {"active": "open", "closed": "won", "dead": "dead"}


def deal_status_q(status: str, prefix: str = "") -> Q:
    """The deals of a status of lev.enums.DEAL_STATUSES, seen through `prefix` (the path to the deal
    from the listed model: "" for deals, "deal__" for placements, "deals__" for stages). `active`:
    not archived, in an open stage; `closed` / `dead`: not archived, in a won / dead stage;
    `archived`: archived (whatever its stage); `all`: every deal."""
    if status == "all":
        return Q()
    if status == "archived":
        return Q(**{f"{prefix}archived": True})
    return Q(**{f"{prefix}archived": False, f"{prefix}stage__kind": _STATUS_KIND[status]})


def active_deals(prefix: str = "") -> Q:
    """Deals being worked: not archived and in an open stage (deal_status_q("active"))."""
    return deal_status_q("active", prefix)


class StageQuerySet(models.QuerySet):
    def ensure_defaults(self, account_id: int) -> None:
        """Give the account the default stages unless it has them. Safe when two processes race: the
        unique (account, key) constraint keeps one set, the loser's inserts are ignored."""
        if self.filter(account_id=account_id, key__in=STAGE_KEYS).exists():
            return
        Stage.objects.bulk_create(
            [Stage(account_id=account_id, key=key, name=name, kind=kind, position=index)
             for index, (key, name, kind) in enumerate(DEFAULT_STAGES, start=1)],
            ignore_conflicts=True,
        )

    def first_of(self, account_id: int) -> Stage:
        """The account's first stage (its defaults made first if it has none): where a new deal starts."""
        self.ensure_defaults(account_id)
        return self.filter(account_id=account_id).order_by("position", "id").first()


class Stage(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="stages")
    key = models.CharField(max_length=20, blank=True, default="", choices=choices(STAGE_KEYS),
                           help_text="The role of a default stage (the automatic moves find it by this); "
                                     "empty for a stage an admin added.")
    name = models.CharField(max_length=limits.STAGE_NAME_MAX)
    kind = models.CharField(max_length=8, choices=choices(STAGE_KINDS), default="open",
                            help_text="open: being worked; won: closed; dead: lost or dropped.")
    position = models.PositiveSmallIntegerField(help_text="Order in the pipeline, first = 1.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = StageQuerySet.as_manager()

    class Meta:
        ordering = ["account", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["account", "key"], condition=~Q(key=""), name="uniq_stage_key"),
            models.UniqueConstraint(Lower("name"), "account", name="uniq_stage_name"),
        ]

    def __str__(self) -> str:
        return self.name


class StageChange(models.Model):
    """One move of a deal between stages: who, when, from where to where, automatic or by hand, and
    why. The stage names are kept as they were at the move, so a later rename does not rewrite history.
    A deal's first record (from_stage null) says where it started."""

    deal = models.ForeignKey("deals.Deal", on_delete=models.CASCADE, related_name="stage_changes")
    from_stage = models.ForeignKey(Stage, null=True, blank=True, on_delete=models.RESTRICT, related_name="+")
    to_stage = models.ForeignKey(Stage, on_delete=models.RESTRICT, related_name="+")
    from_name = models.CharField("from", max_length=limits.STAGE_NAME_MAX, blank=True, default="")
    to_name = models.CharField("to", max_length=limits.STAGE_NAME_MAX)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                           related_name="+", help_text="Who moved it (for an automatic move: who did what moved it).")
    automatic = models.BooleanField(default=False)
    reason = models.CharField(max_length=limits.STAGE_REASON_MAX, blank=True, default="")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["deal", "at", "id"], name="deals_stagechange_deal_at")]

    def __str__(self) -> str:
        return f"{self.from_name or '—'} → {self.to_name}"
