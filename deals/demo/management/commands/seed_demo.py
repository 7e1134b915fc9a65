import datetime as dt
import secrets
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.db.models import Q

from deals.demo.directory import seed_directory
from deals.demo.history import (
    DEMO_HISTORY_FILE,
    Market,
    import_demo_history,
    retire_legacy_history,
    seed_demo_pipeline,
    seed_demo_search,
)
from deals.demo.key import demo_api_key_ensure, key_file
from deals.demo.notes import date_demo_placements, seed_demo_notes
from deals.demo.pipeline import seed_demo_stages
from deals.demo.rates import seed_market_rates
from deals.history.errors import HistoryRefused, ImportBusy
from deals.history.reader import TableError
from deals.models import Company, Contact, Deal, DealFinancials, DealProperty, Placement
from deals.placements.activity import lender_activity_recompute
from deals.searches.ranking.evidence import refresh_lender_signals
from lev.accounts.models import Account, Membership
from lev.accounts.services import account_create

# The default directory: its size and seed (deals/demo/history.csv names its lenders).
DEMO_LENDERS = 400
DEMO_SEED = 7

DEMO_DEALS = [
    {
        "title": "Riverside Apartments Refinance", "loan_amount": Decimal("18500000"), "loan_type": "permanent",
        "transaction_type": "refinance", "business_plan": "stabilized",
        "description": "212-unit garden-style multifamily, 95% occupied.",
        "properties": [{"name": "Riverside Apartments", "address": "1200 River Rd", "city": "Austin",
                        "state": "TX", "zip": "78701", "asset_type": "multifamily", "units": 212,
                        "year_built": 2004}],
        "financials": {"purchase_price": Decimal("21000000"), "estimated_value": Decimal("26000000"),
                       "in_place_noi": Decimal("1650000"), "stabilized_noi": Decimal("1720000"),
                       "existing_debt": Decimal("14000000"), "interest_rate": Decimal("6.25")},
    },
    {
        "title": "Harbor Point Office Value-Add", "loan_amount": Decimal("42000000"), "loan_type": "heavy_bridge",
        "transaction_type": "acquisition", "business_plan": "value_add",
        "description": "Class B office, lease-up from 68% to 90%.",
        "properties": [{"name": "Harbor Point Tower", "address": "55 Harbor Way", "city": "Miami", "state": "FL",
                        "zip": "33131", "asset_type": "office", "square_footage": 310000, "year_built": 1988}],
        "financials": {"purchase_price": Decimal("58000000"), "in_place_noi": Decimal("2900000"),
                       "stabilized_noi": Decimal("4600000"), "interest_rate": Decimal("8.5")},
    },
    {
        "title": "Mesa Self Storage Portfolio", "loan_amount": Decimal("9750000"), "loan_type": "light_bridge",
        "transaction_type": "acquisition", "business_plan": "value_add",
        "properties": [
            {"name": "Mesa Storage North", "city": "Mesa", "state": "AZ", "zip": "85201",
             "asset_type": "self_storage", "square_footage": 72000},
            {"name": "Mesa Storage South", "city": "Mesa", "state": "AZ", "zip": "85210",
             "asset_type": "self_storage", "square_footage": 64000},
        ],
    },
    {
        "title": "Lakeview Industrial Build-to-Suit", "loan_amount": Decimal("31000000"),
        "loan_type": "construction", "transaction_type": "new_construction", "business_plan": "construction",
        "estimated_close_date": dt.date(2027, 3, 31),
        "properties": [{"name": "Lakeview Logistics Center", "city": "Joliet", "state": "IL", "zip": "60431",
                        "asset_type": "industrial", "square_footage": 420000}],
    },
    {
        "title": "Cedar Hills Land Assemblage", "loan_amount": Decimal("4200000"), "loan_type": "land",
        "transaction_type": "acquisition", "business_plan": "land",
        "properties": [{"name": "Cedar Hills Parcels", "city": "Nashville", "state": "TN", "asset_type": "land"}],
    },
    {"title": "Downtown Hotel Recapitalization (draft)", "loan_type": "tbd", "transaction_type": "tbd"},
]

# How much more of the account's history is in the first demo deal's market (the deal placed and ranked
# with evidence) than in each other demo deal's.
DEMO_DEAL_FOCUS = 4.0


def demo_markets() -> list[Market]:
    """The demo deals' markets, which the account's history leans toward (deals.demo.history)."""
    markets = []
    for n, spec in enumerate(DEMO_DEALS):
        for state, asset_type in sorted({(p["state"], p["asset_type"]) for p in spec.get("properties", [])
                                         if p.get("state") and p.get("asset_type")}):
            markets.append(Market(state, asset_type, float(spec.get("loan_amount") or 0), spec.get("loan_type", ""),
                                  spec.get("transaction_type", ""), spec.get("business_plan", ""),
                                  weight=DEMO_DEAL_FOCUS if n == 0 else 1.0))
    return markets


# The demo account's companies and the people there (deals.companies), and which deals name them.
DEMO_COMPANIES = [
    {"kind": "sponsor", "name": "Bluebonnet Residential Partners", "website": "https://bluebonnet.example.com",
     "location": "Austin, TX", "notes": "Repeat sponsor; 4,000 units owned across Texas.",
     "contacts": [{"name": "Maria Delgado", "title": "Managing Principal", "email": "maria@bluebonnet.example.com",
                   "phone": "+1 512 555 0142"},
                  {"name": "Kevin Park", "title": "VP Acquisitions", "email": "kpark@bluebonnet.example.com",
                   "phone": "+1 512 555 0187"}]},
    {"kind": "borrower", "name": "Riverside Apartments Owner LLC", "location": "Austin, TX",
     "notes": "Single-purpose entity of Bluebonnet Residential Partners.", "contacts": []},
    {"kind": "sponsor", "name": "Coastal Office Ventures", "website": "https://coastaloffice.example.com",
     "location": "Miami, FL", "contacts": [{"name": "Andre Thompson", "title": "Principal",
                                             "email": "andre@coastaloffice.example.com", "phone": "+1 305 555 0110"}]},
    {"kind": "borrower", "name": "Harbor Point Holdings LLC", "location": "Miami, FL", "contacts": []},
    {"kind": "broker", "name": "Saguaro Capital Advisors", "location": "Phoenix, AZ",
     "contacts": [{"name": "Lena Ortiz", "title": "Director", "email": "lena@saguaro.example.com"}]},
]
DEMO_DEAL_COMPANIES = {
    "Riverside Apartments Refinance": ("Bluebonnet Residential Partners", "Riverside Apartments Owner LLC"),
    "Harbor Point Office Value-Add": ("Coastal Office Ventures", "Harbor Point Holdings LLC"),
}
# The deal team's login (a staff member of the demo account, not a superuser) beside the operations
# superuser "admin": it owns the demo deals and works them in the admin; these permissions are its (deals
# are archived, not deleted: only its notes may be deleted; the lender directory is every account's).
DEAL_TEAM_USER = "dana"
DEAL_TEAM_GROUP = "Deal team"
DEAL_TEAM_PERMISSIONS = {"deals": ("view", "add", "change"), "lenders": ("view",)}
DEAL_TEAM_ALSO = ("delete_note",)

# The demo account's own contacts at the lenders its demo deal is placed with (first name, last name, title).
DEMO_LENDER_PEOPLE = [("Sam", "Whitfield", "Director, Originations"), ("Priya", "Raman", "Managing Director"),
                      ("Tom", "Alvarez", "Vice President"), ("Grace", "Liu", "Senior Originator"),
                      ("Omar", "Haddad", "Principal")]


class Command(BaseCommand):
    help = ("Seed demo data: a synthetic lender directory, a demo account with deals, its operations superuser "
            "'admin' and its deal team's 'dana'. Deterministic and idempotent. With --print-credentials, also "
            "prints new passwords of both and "
            "the demo API key (the same on every run: kept in LEV_DEMO_KEY_FILE) with commands to connect.")

    def add_arguments(self, parser):
        parser.add_argument("--lenders", type=int, default=DEMO_LENDERS,
                            help=f"Lenders in the directory (default {DEMO_LENDERS}). The demo history names "
                                 "the default directory's lenders: with fewer, the rows of the lenders missing "
                                 "are left out.")
        parser.add_argument("--seed", type=int, default=DEMO_SEED,
                            help=f"Random seed of the directory (default {DEMO_SEED}; the demo history's lenders "
                                 "are the default seed's).")
        parser.add_argument("--print-credentials", action="store_true",
                            help="Reset the passwords of admin and dana and print them with the demo API key and "
                                 "client commands.")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000",
                            help="Where the site will be served, for the printed commands (make run passes its "
                                 "HOST and PORT).")

    def handle(self, *args, **options):
        # No seeded activity counters: the signals are computed from the demo account's history below.
        lenders, programs = seed_directory(options["lenders"], seed=options["seed"])
        self.stdout.write(f"Lender directory: {lenders} lenders and {programs} programs added.")
        if lenders and connection.vendor == "postgresql":
            # Fresh statistics, so the first queries on the new rows get sensible plans.
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE lenders_lender, lenders_lenderprogram, lenders_lenderactivity")
        account, user, created = self._seed_account()
        self.stdout.write(f"Demo account {account.slug!r}: {created} deals added.")
        # The deal team's person works the demo: its history, searches, placements and notes are hers, as
        # the demo key's actions are (issue 39: every one was credited to the operations superuser).
        team = get_user_model().objects.get(username=DEAL_TEAM_USER)
        self._seed_placements(account, team)
        if options["print_credentials"]:
            self._print_credentials(account, user, team, options["base_url"].rstrip("/"))

    @transaction.atomic
    def _seed_account(self):
        User = get_user_model()
        user, _ = User.objects.get_or_create(username="admin", defaults={"email": "admin@example.com"})
        if not user.is_superuser:
            user.is_staff = user.is_superuser = True
            user.set_unusable_password()
            user.save()
        account = Account.objects.filter(slug="demo-capital").first() or account_create(
            name="Demo Capital Partners"
        )
        if account.slug != "demo-capital":
            account.slug = "demo-capital"
            account.save(update_fields=["slug"])
        Membership.objects.get_or_create(account=account, user=user, defaults={"role": Membership.Role.OWNER})
        team = self._seed_deal_team(account)
        created = 0
        for spec in DEMO_DEALS:
            if Deal.objects.filter(account=account, title=spec["title"]).exists():
                continue
            data = {k: v for k, v in spec.items() if k not in ("properties", "financials")}
            deal = Deal.objects.create(account=account, created_by=team, **data)
            DealProperty.objects.bulk_create([DealProperty(deal=deal, **p) for p in spec.get("properties", [])])
            if spec.get("financials"):
                DealFinancials.objects.create(deal=deal, **spec["financials"])
            created += 1
        # Across the pipeline, each with a believable history (once: a deal with a history keeps it).
        for deal in Deal.objects.filter(account=account, title__in=[spec["title"] for spec in DEMO_DEALS]):
            seed_demo_stages(deal=deal, user=team)
        # The deal team's person runs the demo deals (once: a deal handed to someone else stays theirs).
        Deal.objects.filter(account=account, title__in=[spec["title"] for spec in DEMO_DEALS],
                            owner=user).update(owner=team)
        self._seed_companies(account)
        return account, user, created

    @staticmethod
    def _seed_deal_team(account):
        """Dana: staff (she signs in to the admin), not a superuser, a member of the demo account, with
        the deal team's permissions (a group: every account's deals stay kept to her accounts)."""
        User = get_user_model()
        person, made = User.objects.get_or_create(
            username=DEAL_TEAM_USER, defaults={"email": "dana@example.com", "first_name": "Dana",
                                               "last_name": "Whitaker", "is_staff": True})
        if made:
            person.set_unusable_password()
            person.save()
        group, _ = Group.objects.get_or_create(name=DEAL_TEAM_GROUP)
        wanted = Q(content_type__app_label="deals", codename__in=DEAL_TEAM_ALSO)
        for app, actions in DEAL_TEAM_PERMISSIONS.items():
            for action in actions:
                wanted |= Q(content_type__app_label=app, codename__startswith=f"{action}_")
        group.permissions.set(Permission.objects.filter(wanted))
        person.groups.add(group)
        Membership.objects.get_or_create(account=account, user=person, defaults={"role": Membership.Role.MEMBER})
        return person

    @staticmethod
    def _seed_companies(account) -> None:
        for spec in DEMO_COMPANIES:
            fields = {k: v for k, v in spec.items() if k not in ("name", "contacts")}
            company, _ = Company.objects.get_or_create(account=account, name=spec["name"], defaults=fields)
            for person in spec["contacts"]:
                Contact.objects.get_or_create(account=account, company=company, name=person["name"],
                                              defaults={k: v for k, v in person.items() if k != "name"})
        for title, (sponsor, borrower) in DEMO_DEAL_COMPANIES.items():
            Deal.objects.filter(account=account, title=title, sponsor=None, borrower=None).update(
                sponsor=Company.objects.get(account=account, name=sponsor),
                borrower=Company.objects.get(account=account, name=borrower))

    @staticmethod
    def _seed_lender_contacts(account, deal) -> None:
        """A contact at each lender the demo deal is placed with, and the placement sent to them."""
        for index, placement in enumerate(deal.placements.select_related("lender").order_by("id")):
            first, last, title = DEMO_LENDER_PEOPLE[index % len(DEMO_LENDER_PEOPLE)]
            domain = "".join(ch for ch in placement.lender.name.lower() if ch.isalnum())[:20] + ".example.com"
            contact, _ = Contact.objects.get_or_create(
                account=account, lender=placement.lender, name=f"{first} {last}",
                defaults={"title": title, "email": f"{first.lower()}.{last.lower()}@{domain}",
                          "phone": f"+1 212 555 01{index % 100:02d}"})
            if placement.contact_id is None:
                # A plain update, not saved with history: who the demo's placement went to was set as it
                # was sent, which its timeline already says (placement_sent).
                Placement.objects.filter(pk=placement.pk).update(contact=contact, contact_name=contact.name,
                                                                 contact_email=contact.email)

    def _seed_placements(self, account, user) -> None:
        """Market rates (a dated history of every index), the account's own history of placements and
        quotes, the signals and activity the ranking learns from it, and one demo deal in mid-placement,
        ranked with that evidence (deals.demo.history)."""
        rates = seed_market_rates()
        self.stdout.write(f"Market rates: {rates} dated rates added." if rates else "Market rates: already there.")
        retired = retire_legacy_history()
        if retired:
            self.stdout.write(f"Old market history account removed ({retired} past deals): the history is "
                              f"{account.name}'s own now.")
        try:
            loaded = import_demo_history(account)
        except (HistoryRefused, TableError, ImportBusy) as exc:
            problems = exc.result.problems[:5] if isinstance(exc, HistoryRefused) else [exc]
            raise CommandError(f"{DEMO_HISTORY_FILE.name}: the demo history was not imported: "
                               + "; ".join(str(p) for p in problems)) from None
        history = loaded.stats
        if loaded.generated:
            self.stdout.write(f"Market history of {account.name}: already there (generated by an older seed_demo).")
        elif loaded.rows and loaded.left_out == loaded.rows:
            self.stdout.write(f"Market history of {account.name}: none: no row of {DEMO_HISTORY_FILE.name} names a "
                              f"lender of this directory (the file names the default directory's {DEMO_LENDERS} "
                              f"lenders, seed {DEMO_SEED}).")
        elif history.deals:
            self.stdout.write(f"Market history of {account.name}: {history}, imported from {DEMO_HISTORY_FILE.name} "
                              f"(its days moved {loaded.shift_days} days on, to end yesterday).")
            if loaded.left_out:
                self.stdout.write(f"Market history: {loaded.left_out} of the file's {loaded.rows} rows left out: "
                                  f"their lenders are not in this directory (the file names the default "
                                  f"directory's {DEMO_LENDERS} lenders, seed {DEMO_SEED}).")
        else:
            self.stdout.write(f"Market history of {account.name}: already there.")
        # What the demo deal's search learns from: the account's own outcomes, as signals and activity.
        signals = refresh_lender_signals()
        self.stdout.write(f"Lender signals: {signals.rows} rows learned from {signals.placements} placements.")
        lender_activity_recompute()
        deal = Deal.objects.filter(account=account, title=DEMO_DEALS[0]["title"]).first()
        placed = 0
        if deal is not None and history.deals and Placement.objects.filter(deal=deal).exists():
            # Placed before this history was there (an older database): ranked again, now with evidence.
            seed_demo_search(deal=deal, user=user, again=True)
        if deal is not None:
            placed = seed_demo_pipeline(deal=deal, user=user)
        if placed:
            date_demo_placements(deal=deal)  # on the days of its path, as its stage history is
            self.stdout.write(f"Deal {deal.title!r}: placed with lenders, two quotes recorded.")
        if deal is not None:
            self._seed_lender_contacts(account, deal)
        # Calls with the lenders' people, emails and sponsor meetings: each demo deal's timeline reads
        # like a real deal's.
        notes = sum(seed_demo_notes(deal=d, user=user)
                    for d in Deal.objects.filter(account=account, title__in=[s["title"] for s in DEMO_DEALS]))
        if notes:
            self.stdout.write(f"Demo deals: {notes} notes, calls and meetings recorded.")
        # After the demo deal's placements too, so a second run computes the same signals.
        if placed:
            refresh_lender_signals()
        markets = lender_activity_recompute()
        self.stdout.write(f"Lender activity: {markets} lender markets computed from placements and term sheets.")

    def _print_credentials(self, account, user, team, base_url: str):
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        user.save(update_fields=["password"])
        team_password = secrets.token_urlsafe(12)
        team.set_password(team_password)
        team.save(update_fields=["password"])
        # The demo key is the deal team's: what an agent does with it is credited to dana and shows in her
        # "Your deals", as her own work in the admin does.
        key, new = demo_api_key_ensure(user=team, account=account)
        kept = (f"new: kept in {key_file()}, so every next run prints this same key" if new
                else f"the same as before: kept in {key_file()}")
        auth = f"Authorization: Bearer {key}"
        lines = [
            "",
            f"Admin login:  username 'admin', password '{password}'   ({base_url}/admin/)",
            "              operations: a superuser, every account's records and the site's tables",
            f"Deal team:    username '{DEAL_TEAM_USER}', password '{team_password}'   ({base_url}/admin/)",
            f"              the daily workspace: a member of {account.name}, its pipeline, deals and lenders",
            f"API key:      {key}   ({kept}; {DEAL_TEAM_USER}'s key)",
            "",
            f"MCP endpoint: {base_url}/mcp   (Streamable HTTP; REST API {base_url}/api/v1/, docs "
            f"{base_url}/api/v1/docs/, health {base_url}/health)",
            "Connect a client (copy and paste):",
            f'  Claude Code:    claude mcp add --transport http lev {base_url}/mcp --header "{auth}"',
            f"  MCP Inspector (Node 22+):  npx @modelcontextprotocol/inspector --cli {base_url}/mcp --transport http "
            f'--header "{auth}" --method tools/list',
            f'  curl:           curl -H "{auth}" {base_url}/api/v1/deals/',
            f"  By URL alone:   clients that sign in with OAuth (hosted connectors, \"add server by URL\") "
            f"take {base_url}/mcp and log in as '{DEAL_TEAM_USER}' (docs/oauth.md)",
        ]
        for line in lines:
            self.stdout.write(line)
