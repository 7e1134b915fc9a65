"""Market rates: each rate index's dated history (global market data, like the lender directory)."""
