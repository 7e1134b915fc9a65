"""Adapters: the only places product code may rely on a library's internals, one module per library,
each for a need the library offers no public hook for, each with a test that fails when the library's
installed version is not the one the adapter was written against (docs/architecture.md, "Adapters")."""
