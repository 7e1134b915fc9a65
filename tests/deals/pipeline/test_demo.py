"""seed_demo spreads the demo deals across the pipeline, each with a history that reads as a chain of
dated moves, and a second run adds none."""

from __future__ import annotations

import itertools
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from deals.models import Deal, StageChange

pytestmark = pytest.mark.django_db


def test_the_demo_deals_sit_across_the_pipeline_with_believable_histories():
    call_command("seed_demo", "--lenders", "60", stdout=StringIO())
    # Its demo deals: the account's market history is archived past deals, bulk-made without a path.
    demo = Deal.objects.filter(account__slug="demo-capital", archived=False).select_related("stage")
    stages = {deal.title: deal.stage.key for deal in demo}
    assert stages["Riverside Apartments Refinance"] == "term_sheets"  # it has its two quotes
    assert stages["Lakeview Industrial Build-to-Suit"] == "closing"
    assert stages["Cedar Hills Land Assemblage"] == "dead"
    assert stages["Downtown Hotel Recapitalization (draft)"] == "intake"
    assert len(set(stages.values())) >= 5
    now = timezone.now()
    for deal in demo:
        changes = list(StageChange.objects.filter(deal=deal).select_related("from_stage", "to_stage"))
        assert changes[0].from_stage is None and changes[0].at == deal.created_at, deal.title
        for before, after in itertools.pairwise(changes):
            assert after.from_stage == before.to_stage and before.at < after.at <= now, deal.title
            assert after.reason and after.by is not None and not after.automatic, deal.title
        assert changes[-1].to_stage == deal.stage, deal.title
    count = StageChange.objects.count()
    call_command("seed_demo", "--lenders", "60", stdout=StringIO())
    assert StageChange.objects.count() == count
