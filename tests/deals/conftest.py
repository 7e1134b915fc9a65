from tests.deals.fixtures import eager_jobs

__all__ = ["eager_jobs"]
