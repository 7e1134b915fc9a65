import datetime as dt

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from lev.accounts import scopes, services
from lev.accounts.models import Account, Membership


class Command(BaseCommand):
    help = ("Create an API key (Bearer lev_sk_...) for a user; the raw key is printed once, never stored. "
            "It may do everything unless --read-only or --scopes says otherwise.")

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--account", help="Account slug (default: the user's first membership).")
        parser.add_argument("--name", default="cli", help="A label for the key.")
        parser.add_argument("--expires-in-days", type=int, default=None,
                            help="Days until the key expires (default: never).")
        access = parser.add_mutually_exclusive_group()
        access.add_argument("--read-only", action="store_true",
                            help="Only read: " + ", ".join(sorted(scopes.READ_ONLY_SCOPES)) + ".")
        access.add_argument("--scopes", help="Comma- or space-separated scopes, of: " + ", ".join(scopes.SCOPES) + ".")

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user named {options['username']!r}.")
        if options["account"]:
            account = Account.objects.filter(slug=options["account"]).first()
            if account is None:
                raise CommandError(f"No account with slug {options['account']!r}.")
        else:
            membership = Membership.objects.filter(user=user).select_related("account").order_by("id").first()
            if membership is None:
                raise CommandError("The user is not a member of any account; pass --account or add one.")
            account = membership.account
        days = options["expires_in_days"]
        if days is not None and days <= 0:
            raise CommandError("--expires-in-days must be a positive number of days.")
        expires_at = timezone.now() + dt.timedelta(days=days) if days else None
        granted = scopes.ALL_SCOPES
        if options["read_only"]:
            granted = scopes.READ_ONLY_SCOPES
        elif options["scopes"] is not None:
            try:
                granted = scopes.parse(options["scopes"])
            except ValueError as exc:
                raise CommandError(f"--scopes: {exc}.") from None
            if not granted:
                raise CommandError("--scopes: name at least one scope.")
        _key, raw = services.api_key_create(user=user, account=account, name=options["name"],
                                            expires_at=expires_at, scopes=granted)
        self.stdout.write(raw)
