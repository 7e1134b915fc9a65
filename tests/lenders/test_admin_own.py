"""A deal team's own lenders and programs in the admin (issue 38): its login (staff, a member of its
account, with the deal team's permissions: the directory's view alone) adds a lender the directory lacks
and programs to it or to a directory lender, changes only its own, reads the directory beside them (each
row marked Directory or Own); another account's staff never reaches them; a viewer adds nothing."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from lenders.models import Lender, LenderProgram
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, change_form_data
from tests.factories import AccountFactory, LenderFactory, LenderProgramFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

# The demo deal team's permissions (deals.demo.management.commands.seed_demo.DEAL_TEAM_PERMISSIONS): the
# directory's view only. Adding and changing its own comes from its role in its account.
TEAM_CODENAMES = ("view_lender", "view_lenderprogram")
PROGRAM_FIELDS = {"title": "Our bridge line", "status": "active", "loan_types": ["permanent"],
                  "positions": ["senior"], "asset_types": ["multifamily"], "min_loan_amount": "1000000",
                  "max_loan_amount": "20000000", "max_ltv": "75", "min_dscr": "1.25"}


def team_login(account, username: str, role: str = Membership.Role.MEMBER):
    user = UserFactory(username=username, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=TEAM_CODENAMES))
    MembershipFactory(account=account, user=user, role=role)
    return admin_client(user)


def url(model, view: str, *args) -> str:
    return reverse(f"admin:lenders_{model._meta.model_name}_{view}", args=args)


def test_a_deal_team_adds_its_lender_and_programs_and_changes_only_its_own(account):
    directory = LenderProgramFactory(lender=LenderFactory(name="Big Directory Bank")).lender
    team = team_login(account, "dana")
    assert team.get(url(Lender, "add")).status_code == 200  # was 403 before issue 38
    response = team.post(url(Lender, "add"), {"account": account.pk, "name": "Hill Country Bank", "state": "TX",
                                              "lender_types": ["bank"], "programs-TOTAL_FORMS": "0",
                                              "programs-INITIAL_FORMS": "0"})
    assert response.status_code == 302, response.context["adminform"].form.errors
    ours = Lender.objects.get(name="Hill Country Bank")
    assert ours.account_id == account.pk

    # A program on its own lender's page: the lender's account's.
    page = team.get(url(Lender, "change", ours.pk))
    assert page.status_code == 200 and "Own · Acme Capital" in page.content.decode()
    data = change_form_data(page)
    data.update({"programs-TOTAL_FORMS": "1", **{f"programs-0-{k}": v for k, v in PROGRAM_FIELDS.items()}})
    response = team.post(url(Lender, "change", ours.pk), data)
    assert response.status_code == 302, response.context["inline_admin_formsets"][0].formset.errors
    program = ours.programs.get()
    assert program.account_id == account.pk and program.asset_types == ["multifamily"]

    # Its own program on a directory lender, from the programs' add page.
    response = team.post(url(LenderProgram, "add"), {"lender": directory.pk, "account": account.pk, **PROGRAM_FIELDS,
                                                     "title": "Our terms there"})
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert directory.programs.get(title="Our terms there").account_id == account.pk

    # The list marks each row; the directory's page reads, but is not changed by the team.
    listing = team.get(url(Lender, "changelist")).content.decode()
    assert "Big Directory Bank" in listing and "Hill Country Bank" in listing and "Directory" in listing
    assert {row.pk for row in team.get(url(Lender, "changelist"), {"source": "own"}).context["cl"].result_list} == {
        ours.pk}
    assert team.get(url(Lender, "change", directory.pk)).status_code == 200  # read-only
    assert team.post(url(Lender, "change", directory.pk), {"name": "Mine now"}).status_code == 403
    directory_program = directory.programs.get(account=None)
    assert team.post(url(LenderProgram, "change", directory_program.pk), {"title": "x"}).status_code == 403
    directory.refresh_from_db()
    assert directory.name == "Big Directory Bank" and directory.programs.get(account=None).title != "x"
    # Names a directory lender already has are refused (add programs to it instead).
    response = team.post(url(Lender, "add"), {"account": account.pk, "name": "big directory bank",
                                              "programs-TOTAL_FORMS": "0", "programs-INITIAL_FORMS": "0"})
    assert response.status_code == 200 and "the directory has a lender of this name" in str(
        response.context["adminform"].form.errors["name"]).lower()


def test_another_accounts_staff_never_reaches_them_and_a_viewer_adds_nothing(account):
    ours = Lender.objects.create(account=account, name="Hill Country Bank")
    ours_program = LenderProgramFactory(lender=ours, account=account)
    directory = LenderFactory(name="Big Directory Bank")
    ours_there = LenderProgramFactory(lender=directory, account=account, title="Ours there")

    rival = team_login(AccountFactory(name="Rival Holdings", slug="rival"), "mallory")
    listed = {row.pk for row in rival.get(url(Lender, "changelist")).context["cl"].result_list}
    assert listed == {directory.pk}
    programs = {row.pk for row in rival.get(url(LenderProgram, "changelist")).context["cl"].result_list}
    assert not programs & {ours_program.pk, ours_there.pk}
    for model, pk in ((Lender, ours.pk), (LenderProgram, ours_program.pk), (LenderProgram, ours_there.pk)):
        answer = rival.get(url(model, "change", pk))
        assert answer.status_code == 302 and answer["Location"] == reverse("admin:index"), model
    page = rival.get(url(Lender, "change", directory.pk)).content.decode()
    assert "Ours there" not in page
    response = rival.post(url(LenderProgram, "add"), {"lender": ours.pk, **PROGRAM_FIELDS})
    assert response.status_code == 200 and "lender" in response.context["adminform"].form.errors
    # Nor can it name our account as its program's owner.
    response = rival.post(url(LenderProgram, "add"), {"lender": directory.pk, "account": account.pk,
                                                      **PROGRAM_FIELDS})
    assert response.status_code == 200 and "account" in response.context["adminform"].form.errors
    assert LenderProgram.objects.filter(account=account).count() == 2

    viewer = team_login(account, "vic", role=Membership.Role.VIEWER)
    assert viewer.get(url(Lender, "add")).status_code == 403
    assert viewer.post(url(Lender, "change", ours.pk), {"name": "Renamed"}).status_code == 403
    assert viewer.get(url(Lender, "change", ours.pk)).status_code == 200  # reads its account's own
    ours.refresh_from_db()
    assert ours.name == "Hill Country Bank"
