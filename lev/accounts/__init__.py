"""Tenancy: accounts, memberships, API keys, authentication, scopes, the account-scoped API and admin
bases. Everything above `lev` builds on it; it builds on nothing but the rest of `lev`."""
