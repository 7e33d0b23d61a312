"""Reads of a fixed shape, compiled by the ORM once per database connection instead of once per
call. Building and compiling a one-row read costs the web more than the database's answer: the
session's read, which every browser request makes, took 0.85 ms of CPU through the ORM and
0.19 ms as the same SQL run again (issue #33, the users' CPU).

A FixedRead is a `values_list` queryset made by a function of the read's parameters. On its
first call on a connection it is built with markers in the parameters' places and compiled; the
statement is kept only when each marker is found among the compiled parameters as itself
(strings and integers: the ORM passes them unchanged; a parameter may be used more than once),
so every later call runs the same SQL with its own values in the markers' places, and its
rows go through the ORM's own converters (SQLite's dates and booleans). A read whose markers
the compile changed or dropped is run through the ORM at every call, as before."""
import itertools

from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connections

_MARKS = itertools.count()
_UNFIT = object()


class FixedRead:
    """`build(*params)` -> a values_list queryset whose statement depends on nothing else."""

    def __init__(self, build, kinds):
        self.build, self.kinds = build, tuple(kinds)
        if not set(self.kinds) <= {str, int}:
            raise TypeError("a fixed read's parameters are strings or integers")

    def rows(self, *params, using="default"):
        """The rows of build(*params), as tuples."""
        connection = connections[using]
        kept = connection.__dict__.setdefault("_fixed_reads", {})
        plan = kept.get(self)
        if plan is None:
            plan = kept[self] = self._compile(using)
        if plan is _UNFIT or any(type(p) is not kind for p, kind in zip(params, self.kinds,
                                                                          strict=True)):
            return [tuple(row) for row in self.build(*params)]
        sql, fixed, places, compiler, converters = plan
        values = list(fixed)
        for at, which in places:
            values[at] = params[which]
        with connection.cursor() as cursor:
            cursor.execute(sql, values)
            rows = cursor.fetchall()
        if converters:
            rows = compiler.apply_converters(rows, converters)
        return [tuple(row) for row in rows]

    def _compile(self, using):
        markers = [_marker(kind) for kind in self.kinds]
        compiler = self.build(*markers).query.get_compiler(using=using)
        try:
            sql, fixed = compiler.as_sql()
        except (EmptyResultSet, FullResultSet):    # a marker decided the statement
            return _UNFIT
        places = []
        for which, marker in enumerate(markers):
            found = [(at, which) for at, value in enumerate(fixed)
                     if type(value) is type(marker) and value == marker]
            if not found:
                return _UNFIT
            places += found
        converters = compiler.get_converters([s[0] for s in compiler.select[:compiler.col_count]])
        return sql, tuple(fixed), places, compiler, converters


def _marker(kind):
    """A value of `kind` to find again among the compiled parameters (an integer within a
    32-bit column's range: the ORM drops a lookup beyond it)."""
    n = next(_MARKS)
    return f"fixed-read-marker-{n}-{id(_MARKS)}" if kind is str else 2_147_000_000 + n % 400_000
