from tests.lenders.fixtures import eager_jobs

__all__ = ["eager_jobs"]
