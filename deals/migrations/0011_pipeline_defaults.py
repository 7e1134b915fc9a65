"""Every existing account gets the default stages, and every existing deal a stage read from its records
and an owner (its creator), with a first history record saying so. Deals are placed by what they
already show, furthest first:

* archived                                  → dead (archiving is final; the deal is no longer worked)
* a winning term sheet                      → closing
* a live term sheet                         → term sheets
* a placement or a lender search            → in market
* otherwise                                 → intake
"""

from django.db import migrations
from django.utils import timezone

# Frozen here (lev.enums.DEFAULT_STAGES may change later; this migration must not).
DEFAULT_STAGES = (
    ("intake", "Intake", "open"),
    ("underwriting", "Underwriting", "open"),
    ("in_market", "In market", "open"),
    ("term_sheets", "Term sheets", "open"),
    ("closing", "Closing", "open"),
    ("closed", "Closed", "won"),
    ("dead", "Dead", "dead"),
)
REASON = "Placed when the pipeline was introduced, from the deal's records ({why})."
BATCH = 500


def _stage_key(deal, winners, quoted, worked) -> tuple[str, str]:
    if deal.archived:
        return "dead", "archived"
    if deal.pk in winners:
        return "closing", "a winning quote"
    if deal.pk in quoted:
        return "term_sheets", "quotes received"
    if deal.pk in worked:
        return "in_market", "a lender search or placements"
    return "intake", "nothing in market yet"


def forwards(apps, schema_editor):
    Account = apps.get_model("accounts", "Account")
    Deal = apps.get_model("deals", "Deal")
    Stage = apps.get_model("deals", "Stage")
    StageChange = apps.get_model("deals", "StageChange")
    TermSheet = apps.get_model("deals", "TermSheet")
    Placement = apps.get_model("deals", "Placement")
    LenderSearch = apps.get_model("deals", "LenderSearch")

    for account_id in Account.objects.values_list("pk", flat=True):
        if not Stage.objects.filter(account_id=account_id).exists():
            Stage.objects.bulk_create([
                Stage(account_id=account_id, key=key, name=name, kind=kind, position=index)
                for index, (key, name, kind) in enumerate(DEFAULT_STAGES, start=1)
            ])
    stages = {(s.account_id, s.key): s for s in Stage.objects.exclude(key="")}
    winners = set(TermSheet.objects.filter(winning=True).values_list("deal_id", flat=True))
    quoted = set(TermSheet.objects.filter(deleted_at=None).values_list("deal_id", flat=True))
    worked = (set(Placement.objects.values_list("deal_id", flat=True))
              | set(LenderSearch.objects.values_list("deal_id", flat=True)))
    now = timezone.now()
    deals = Deal.objects.filter(stage=None).order_by("pk")
    while True:
        batch = list(deals[:BATCH])
        if not batch:
            break
        changes = []
        for deal in batch:
            key, why = _stage_key(deal, winners, quoted, worked)
            stage = stages[(deal.account_id, key)]
            deal.stage_id = stage.pk
            if deal.owner_id is None:
                deal.owner_id = deal.created_by_id
            changes.append(StageChange(deal_id=deal.pk, to_stage_id=stage.pk, to_name=stage.name, automatic=True,
                                       reason=REASON.format(why=why), at=now))
        Deal.objects.bulk_update(batch, ["stage", "owner"])
        StageChange.objects.bulk_create(changes)


class Migration(migrations.Migration):
    dependencies = [("deals", "0010_pipeline")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
