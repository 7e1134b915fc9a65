"""The product's adapters over libraries that offer no public hook for something it needs: each module
is named for its library, holds every touch of that library's insides, and names the versions it was
written against (a test fails when the installed one differs). docs/architecture.md lists them."""
