"""Idempotent creates (services: the `idempotent` decorator, the purge; models: the stored records)."""
