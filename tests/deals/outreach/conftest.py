from tests.deals.fixtures import eager_jobs, jobs_in_process
from tests.deals.outreach.smtp import smtp

__all__ = ["eager_jobs", "jobs_in_process", "smtp"]
