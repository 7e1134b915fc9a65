# Jobs run in-process for every test here (jobs_in_process is autouse), as on the embedded default.
from tests.deals.fixtures import deal, eager_jobs, jobs_in_process  # noqa: F401  (fixtures)
