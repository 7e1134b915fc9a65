"""`field__anybit=mask`: true when the stored bit mask shares a bit with `mask`.

Lets the list-valued hard filters (loan types, asset types, states, positions) run in SQL on both
PostgreSQL and SQLite, which has no array containment.
"""

from django.db import models
from django.db.models import Lookup


@models.BigIntegerField.register_lookup
class AnyBit(Lookup):
    lookup_name = "anybit"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"({lhs} & {rhs}) <> 0", [*lhs_params, *rhs_params]
