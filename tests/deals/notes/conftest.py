from tests.deals.fixtures import eager_jobs, jobs_in_process

__all__ = ["eager_jobs", "jobs_in_process"]
