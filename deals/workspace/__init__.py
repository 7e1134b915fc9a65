"""The deal team's home page in the admin: its pipeline, its deals, and what waits on a lender."""
