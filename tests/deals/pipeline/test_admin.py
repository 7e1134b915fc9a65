"""The pipeline in the admin: an account's stages (its admins rename, add and reorder them through the
services; other staff may not), stage and owner on the deal list and page, moves recorded, and the deal's
stage history on its page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from deals.models import Deal, Stage, StageChange
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, change_form_data, staff_user, superuser
from tests.factories import AccountFactory, DealFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

STAGE_PERMS = ("view_stage", "change_stage", "add_stage", "view_deal", "change_deal")


def stage(account, key: str) -> Stage:
    return Stage.objects.get(account=account, key=key)


def staff_of(account, username: str, role: str):
    user = staff_user(username, *STAGE_PERMS)
    MembershipFactory(account=account, user=user, role=role)
    return admin_client(user), user


def test_an_account_admin_renames_adds_and_reorders_stages_in_the_admin(account, other_account):
    client, _ = staff_of(account, "olga", Membership.Role.OWNER)
    changelist = client.get(reverse("admin:deals_stage_changelist"))
    assert {row.account_id for row in changelist.context["cl"].result_list} == {account.pk}
    in_market = stage(account, "in_market")
    url = reverse("admin:deals_stage_change", args=[in_market.pk])
    data = change_form_data(client.get(url))
    assert client.post(url, {**data, "name": "Out to lenders", "position": "1"}).status_code == 302
    in_market.refresh_from_db()
    assert (in_market.name, in_market.key, in_market.position) == ("Out to lenders", "in_market", 1)
    assert [s.key for s in Stage.objects.filter(account=account)][:3] == ["in_market", "intake", "underwriting"]
    added = client.post(reverse("admin:deals_stage_add"), {"account": account.pk, "name": "Credit committee",
                                                            "kind": "open", "position": "3"})
    assert added.status_code == 302
    assert Stage.objects.get(account=account, name="Credit committee").position == 3
    assert Stage.objects.filter(account=account).count() == 8
    taken = client.post(reverse("admin:deals_stage_add"), {"account": account.pk, "name": "closing",
                                                            "kind": "open", "position": "1"})
    assert taken.status_code == 200 and Stage.objects.filter(account=account).count() == 8
    # Another account's stage is missing, as everywhere in the admin.
    foreign = reverse("admin:deals_stage_change", args=[stage(other_account, "intake").pk])
    assert client.get(foreign).status_code == 302


def test_staff_who_are_not_account_admins_cannot_change_stages(account):
    client, _ = staff_of(account, "mike", Membership.Role.MEMBER)
    intake = stage(account, "intake")
    url = reverse("admin:deals_stage_change", args=[intake.pk])
    data = change_form_data(client.get(url))
    assert client.post(url, {**data, "name": "Mine"}).status_code == 403
    intake.refresh_from_db()
    assert intake.name == "Intake"


def test_the_deal_list_shows_and_filters_by_stage_and_the_page_moves_a_deal_with_its_history(account,
                                                                                            other_account):
    ops = superuser()
    client = admin_client(ops)
    MembershipFactory(account=account, user=ops, role=Membership.Role.OWNER)
    colleague = MembershipFactory(account=account, user=UserFactory(username="bob")).user
    outsider = UserFactory(username="eve")
    deal = DealFactory(account=account, title="Pine Court")
    DealFactory(account=account, title="Oak Row", stage=stage(account, "closing"))

    listed = client.get(reverse("admin:deals_deal_changelist"), {"stage__id__exact": stage(account, "closing").pk})
    assert [d.title for d in listed.context["cl"].result_list] == ["Oak Row"]
    page = client.get(reverse("admin:deals_deal_changelist")).content.decode()
    assert "Closing" in page and "Intake" in page

    url = reverse("admin:deals_deal_change", args=[deal.pk])
    data = change_form_data(client.get(url))
    moved = client.post(url, {**data, "stage": stage(account, "underwriting").pk, "owner": colleague.pk})
    assert moved.status_code == 302
    deal = Deal.objects.get(pk=deal.pk)
    assert (deal.stage.key, deal.owner) == ("underwriting", colleague)
    change = StageChange.objects.get(deal=deal)
    assert (change.from_stage.key, change.by, change.automatic, change.reason) == (
        "intake", ops, False, "Moved in the admin.")
    page = client.get(url).content.decode()
    assert "stage history" in page.lower() and "Moved in the admin." in page

    # Only a member of the deal's account owns it; only a stage of its account holds it.
    data = change_form_data(client.get(url))
    for bad in ({"owner": outsider.pk}, {"stage": Stage.objects.exclude(account=account).first().pk}):
        refused = client.post(url, {**data, **bad})
        assert refused.status_code == 200, bad
    assert Deal.objects.get(pk=deal.pk).stage.key == "underwriting"
    assert StageChange.objects.filter(deal=deal).count() == 1


def test_the_stage_filter_names_each_stage_once_for_whoever_sees_several_accounts(account, other_account):
    """Operations sees every account's stages: "Intake" is one choice (not one per account), and it
    selects the deals in Intake of every account; a member of one account sees its own stages; the home
    page's link to one account's stage still lists that account's deals, shown chosen."""
    third = AccountFactory(slug="third", name="Third")
    for acct in (account, other_account, third):
        Stage.objects.ensure_defaults(acct.pk)
        DealFactory(account=acct, title=f"{acct.name} intake")
        DealFactory(account=acct, title=f"{acct.name} closing", stage=stage(acct, "closing"))
    renamed = stage(third, "underwriting")
    renamed.name = "Credit review"
    renamed.save()
    url = reverse("admin:deals_deal_changelist")

    def stage_choices(client, params=None):
        page = client.get(url, params or {})
        spec = next(f for f in page.context["cl"].filter_specs if f.title == "stage")
        choices = list(spec.choices(page.context["cl"]))
        return page, [c["display"] for c in choices], [c["display"] for c in choices if c["selected"]]

    ops = admin_client(superuser())
    page, names, chosen = stage_choices(ops)
    assert names.count("Intake") == 1 and names.count("Closing") == 1 and "Credit review" in names
    assert names[:2] == ["All", "Intake"] and chosen == ["All"]
    assert len(names) == len(set(names))
    page, names, chosen = stage_choices(ops, {"stage": "Intake"})
    assert sorted(d.title for d in page.context["cl"].result_list) == sorted(
        f"{a.name} intake" for a in (account, other_account, third))
    assert chosen == ["Intake"]
    page, names, chosen = stage_choices(ops, {"stage__id__exact": stage(other_account, "closing").pk})
    assert [d.title for d in page.context["cl"].result_list] == [f"{other_account.name} closing"]
    assert chosen == ["Closing"]
    # From the one-account link, choosing another stage drops the id (the name alone filters).
    spec = next(f for f in page.context["cl"].filter_specs if f.title == "stage")
    intake_link = next(c for c in spec.choices(page.context["cl"]) if c["display"] == "Intake")["query_string"]
    assert "stage__id__exact" not in intake_link and "stage=Intake" in intake_link

    member, _ = staff_of(account, "mona", Membership.Role.MEMBER)
    page, names, _ = stage_choices(member, {"stage": "Intake"})
    assert "Credit review" not in names and names.count("Intake") == 1
    assert [d.title for d in page.context["cl"].result_list] == [f"{account.name} intake"]
