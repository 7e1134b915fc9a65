"""Every citation of a deal's summary resolves (issue 39: a `brief` summary cited [25] in a next step
while its sources stopped at [23]): at every detail level, over the demo's deals and over randomized
deals (seeded, so a failure replays), each [n] in the text and in each next step names a listed
source, the sources are numbered 1..N in the order the text first cites them, and each source's value
is what its path serves at its field."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from deals.models import Deal, DealFinancials, Placement
from deals.pipeline.models import Stage
from deals.pipeline.services import deal_move_stage
from deals.placements import services as placement_services
from deals.summaries.summary import DETAILS, REF
from lev.accounts.models import Membership
from lev.accounts.services import api_key_create
from tests.conftest import client_with_key
from tests.deals.placements.helpers import lenders, place, quote
from tests.deals.summaries.helpers import API, full_deal, rest_get, searched, value_at
from tests.factories import DealPropertyFactory

pytestmark = pytest.mark.django_db

SEEDS = range(24)


def walk(api, deal: Deal) -> int:
    """Every detail level of `deal`'s summary: each citation resolved. Returns the citations walked."""
    get, served, walked = rest_get(api), {}, 0
    for detail in DETAILS:
        response = api.get(f"{API}/deals/{deal.pk}/summary/", {"detail": detail})
        assert response.status_code == 200, response.content
        body = response.json()
        refs = [source["ref"] for source in body["sources"]]
        assert refs == list(range(1, len(refs) + 1)), (detail, refs)
        listed = {source["ref"]: source for source in body["sources"]}
        in_text = [int(n) for n in REF.findall(body["text"])]
        # The text cites every source, first in the order they are numbered.
        assert list(dict.fromkeys(in_text)) == refs, (detail, body["text"], refs)
        for step in body["next_steps"]:
            # A step the text lists is the text's own line, with the same numbers.
            assert step["text"] in body["text"], (detail, step, body["text"])
            for n in REF.findall(step["text"]):
                assert int(n) in listed, (deal.pk, detail, step["text"], refs)
                walked += 1
        for source in body["sources"]:
            if source["path"] not in served:
                served[source["path"]] = get(source["path"])
            assert value_at(served[source["path"]], source["field"]) == source["value"], (detail, source)
        walked += len(in_text)
    return walked


def member_api(account):
    membership = Membership.objects.filter(account=account).select_related("user").order_by("pk").first()
    _key, raw = api_key_create(user=membership.user, account=account, name="citations")
    return client_with_key(raw)


def test_every_citation_of_the_demo_deals_resolves_at_every_level():
    call_command("seed_demo", "--lenders", "60", stdout=StringIO())
    deals = list(Deal.objects.select_related("account").order_by("account_id", "pk"))
    assert len({d.account_id for d in deals}) >= 1 and len(deals) >= 5
    apis = {}
    walked = 0
    # The open deals and a handful of the archived market history (every history deal reads alike).
    archived = [d for d in deals if d.archived][:5]
    for deal in [d for d in deals if not d.archived] + archived:
        if deal.account_id not in apis:
            apis[deal.account_id] = member_api(deal.account)
        walked += walk(apis[deal.account_id], deal)
    assert walked > 50


def _random_deal(account, rng: random.Random) -> Deal:
    deal = full_deal(account)
    for n in range(rng.randint(0, 3)):
        DealPropertyFactory(deal=deal, name=f"Annex {n}", state=rng.choice(["TX", "CA", "NY"]),
                            asset_type=rng.choice(["multifamily", "office", "industrial"]), units=50 + n)
    if rng.random() < 0.3:
        DealFinancials.objects.filter(deal=deal).update(interest_rate=None)
    if rng.random() < 0.6:
        searched(deal, status=rng.choice(["completed", "completed", "failed", "running", "partial"]),
                 matches=rng.randint(1, 6))
    if rng.random() < 0.7:
        placed = [place(deal, lender, status=rng.choice(["draft", "sent", "sent", "sent", "declined"]))
                  for lender in lenders(rng.randint(1, 8))]
        sent = [p for p in placed if p.status == "sent"]
        for placement in sent:
            Placement.objects.filter(pk=placement.pk).update(
                sent_at=timezone.now() - dt.timedelta(days=rng.randint(1, 30)))
        quoted = []
        for placement in sent[: rng.randint(0, len(sent))]:
            placement.refresh_from_db()
            terms = ({"rate_type": "fixed", "fixed_rate": Decimal(rng.choice(["5.85", "6.25", "7.1"]))}
                     if rng.random() < 0.5 else
                     {"rate_type": "floating", "fixed_rate": None, "rate_index": "sofr",
                      "spread_bps": rng.choice([185, 285, 350])})
            quoted.append(quote(placement, loan_amount=Decimal(rng.choice([8_000_000, 9_500_000, 10_000_000,
                                                                            11_000_000])),
                                term_months=rng.choice([36, 60, 120]),
                                expires_on=timezone.localdate() + dt.timedelta(days=rng.randint(-3, 40)),
                                recourse=rng.choice(["", "non_recourse", "partial", "full"]), **terms))
        live = [t for t in quoted if t.expires_on is None or t.expires_on >= timezone.localdate()]
        if live and rng.random() < 0.4:
            placement_services.term_sheet_select_winner(term_sheet=rng.choice(live))
    if rng.random() < 0.3:
        stage = rng.choice(list(Stage.objects.filter(account=account)))
        deal.refresh_from_db()
        deal_move_stage(deal=deal, stage=stage, reason="moved at random")
    return deal


@pytest.mark.parametrize("seed", SEEDS)
def test_every_citation_of_a_random_deal_resolves_at_every_level(api, account, seed):
    rng = random.Random(seed)
    deal = _random_deal(account, rng)
    assert walk(api, deal) > 0
