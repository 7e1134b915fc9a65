import datetime as dt

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from deals.searches.ranking.backtest import DEFAULT_K, BacktestResult, backtest
from lev.accounts.models import Account

SLUGS_SHOWN = 10


class Command(BaseCommand):
    help = ("Back-test the lender ranking on an account's own history: learn from the placements sent before "
            "--split, rank every deal placed on or after it that got a quote, and print recall@k and NDCG@k of "
            "the ranking (product), of stated programs only and of a random order, against the lenders that "
            "really quoted, then how well its score reads as a chance of a quote (calibration bands and Brier "
            "scores). --synthetic seeds a synthetic market (bench/market.py) into a new account and "
            "back-tests that instead. Reads only, except --synthetic's new account.")

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--account", metavar="SLUG", help="The account to back-test, by slug.")
        source.add_argument("--synthetic", action="store_true",
                            help="Seed the synthetic market into a new account (its slug is printed) and "
                                 "back-test it at its split.")
        parser.add_argument("--split", metavar="YYYY-MM-DD",
                            help="Learn from what was known before this date, test on the deals placed from it "
                                 "(midnight, the site's time zone). Required with --account; with --synthetic, "
                                 "the market's split (default 2025-07-01).")
        parser.add_argument("--k", type=int, default=DEFAULT_K, help=f"Cut-off of the metrics (default {DEFAULT_K}).")
        parser.add_argument("--seed", type=int, default=7,
                            help="Seed of the random baseline's order, and of the synthetic market (default 7).")
        parser.add_argument("--size", choices=("small", "bench"), default="small",
                            help="The synthetic market's size: small (60 lenders, 300 past deals, 40 test deals) "
                                 "or bench (200 lenders, 1,000 past deals, 60 test deals).")

    def handle(self, *args, **options):
        k = options["k"]
        if k < 1:
            raise CommandError("--k must be a positive number of ranks.")
        split = _split(options["split"]) if options["split"] else None
        if options["synthetic"]:
            account, split = self._seed(seed=options["seed"], size=options["size"], split=split)
        else:
            if split is None:
                raise CommandError("--split is required with --account (YYYY-MM-DD).")
            account = Account.objects.filter(slug=options["account"]).first()
            if account is None:
                raise CommandError(f"No account with slug {options['account']!r}. {_slugs_hint()}")
        result = backtest(account.pk, split, k=k, seed=options["seed"])
        if result is None:
            raise CommandError(f"nothing to back-test: no placed deals with quotes after {split.date().isoformat()} "
                               f"in account {account.slug!r}. Choose an earlier --split.")
        self._table(account, split, result, options["seed"])

    def _seed(self, *, seed: int, size: str, split: dt.datetime | None) -> tuple[Account, dt.datetime]:
        try:  # bench/ is the checkout's, beside manage.py, not part of the installed packages
            from bench import market
        except ImportError:
            raise CommandError("--synthetic needs the checkout's bench/ directory: run manage.py from it.") from None
        sizes = market.SMALL if size == "small" else market.BENCH
        seeded = market.seed_market(seed=seed, split=split or market.SPLIT, **sizes)
        self.stdout.write(f"Seeded a synthetic market into account {seeded.account.slug!r}: {seeded.lenders} "
                          f"lenders, {seeded.past_deals} past deals, {seeded.test_deals} test deals, "
                          f"{seeded.placements} placements, {seeded.term_sheets} term sheets; split "
                          f"{seeded.split.date().isoformat()}.")
        return seeded.account, seeded.split

    def _table(self, account: Account, split: dt.datetime, result: BacktestResult, seed: int) -> None:
        k = result.k
        self.stdout.write(f"Back-test of account {account.slug!r} at {split.date().isoformat()}: {result.deals} "
                          f"deals placed from the split with at least one quote; relevant = the lenders that quoted.")
        self.stdout.write(f"{'method':<22} {f'recall@{k}':>10} {f'NDCG@{k}':>9} {'deals':>6}")
        for score in result.scores:
            self.stdout.write(f"{score.method:<22} {score.recall:>10.3f} {score.ndcg:>9.3f} {result.deals:>6}")
        self.stdout.write(f"random: a shuffle (seed {seed}) of every lender eligible under the stated programs.")
        if result.calibration:
            self.stdout.write("Calibration: the placements from the split whose lender both rankings score, by the "
                              "product's score (the chance of a quote, in percent).")
            self.stdout.write(f"{'score':<8} {'placements':>10} {'predicted':>9} {'quoted':>7}")
            for band in result.calibration:
                self.stdout.write(f"{f'{band.low}-{band.high}':<8} {band.placements:>10} {band.predicted:>9.0%} "
                                  f"{band.quoted:>7.0%}")
            self.stdout.write("Brier score (lower is better): " + ", ".join(
                f"{method} {value:.3f}" for method, value in result.brier.items()))


def _split(text: str) -> dt.datetime:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--split: {text!r} is not a date; write YYYY-MM-DD, e.g. 2025-07-01.") from None
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min))


def _slugs_hint() -> str:
    slugs = list(Account.objects.order_by("slug").values_list("slug", flat=True)[: SLUGS_SHOWN + 1])
    if not slugs:
        return "There are no accounts: run with --synthetic to seed one."
    more = ", …" if len(slugs) > SLUGS_SHOWN else ""
    return f"Accounts: {', '.join(slugs[:SLUGS_SHOWN])}{more}."
