"""The demo: every seeder of `make run`'s demo data in one app, installed only where a demo belongs
(`settings.LEV_DEMO`: on in development and tests, off in production unless a trial stack asks for it).

* `directory` — a realistic synthetic lender directory, deterministic for a seed (also the ranking
  benchmark's and many tests');
* `rates` — 18 months of every market rate index;
* `history` — the demo account's market history (archived past deals the ranking learns from), its
  generator and the import of the bundled `history.csv`; the demo deal placed from its ranks;
* `pipeline`, `notes` — the demo deals' paths through the pipeline and the notes along them;
* `key` — the demo API key `make run` prints, the same on every run (kept in `LEV_DEMO_KEY_FILE`);
* `management/commands` — `seed_demo` (what `make run` calls) and `demo_history_file` (writes
  `history.csv` again).

No product module imports this app (tests/architecture/test_demo_isolated.py): it sits on top of the
product and writes through its services and models, as a team's own data would arrive.
"""
