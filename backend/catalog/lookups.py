"""The catalog's own lookups: `ilike` (granule id patterns, see ILike) and
`field__in=[...]` as one array parameter on PostgreSQL: `field = ANY(%s)`.

The archive and ingest pass thousands of ids per statement. Spelled `IN (%s, %s, ...)`, each id
is prepared by Django and quoted into the SQL text by psycopg one at a time, and the server
parses a statement of thousands of literals; as one array it is a single value (about five
times less work for 1,000 ids on both sides). Anything but a plain list of ints or strings
(a subquery, expressions, dates) keeps Django's own IN, as does every other database."""
from django.core.exceptions import EmptyResultSet
from django.db.models import (
    BigIntegerField,
    CharField,
    Field,
    ForeignObject,
    IntegerField,
    Lookup,
    SmallIntegerField,
)
from django.db.models.fields.related_lookups import RelatedIn
from django.db.models.lookups import In

# Below this many values the IN list is as cheap, and plans stay the ones Django would make.
MIN_VALUES = 16


def _integer_ids(lhs, values):
    """Whether `values` are ints for an integer column (a key, or a foreign key to one): each
    would be prepared as itself, one call per id, for nothing."""
    field = getattr(lhs, "output_field", None)
    field = getattr(field, "target_field", None) if isinstance(field, ForeignObject) else field
    return (isinstance(field, IntegerField) and isinstance(values, (list, tuple, set, frozenset))
            and len(values) >= MIN_VALUES and all(type(v) is int for v in values))


class _ArrayIn:
    def get_prep_lookup(self):
        if _integer_ids(self.lhs, self.rhs):
            return list(self.rhs)
        return super().get_prep_lookup()

    def as_postgresql(self, compiler, connection):
        values = self.rhs
        if (self.rhs_is_direct_value() and isinstance(values, (list, tuple, set, frozenset))
                and len(values) >= MIN_VALUES):
            values = [v for v in values if v is not None]
            kind = type(values[0]) if values else None
            if kind in (int, str) and all(type(v) is kind for v in values):
                cast = ""
                array = array_of(getattr(self.lhs, "output_field", None)) if kind is int else None
                if array:
                    # the column's own type: psycopg sends a list of ints as the smallest type
                    # that holds them (smallint[] below 32,768), and PostgreSQL hashes `bigint
                    # = ANY(bigint[])` but not `bigint = ANY(smallint[])`: a scan compared each
                    # row with every id, 6x slower for 235 ids (an object-store write's copy
                    # aggregates, 20 ms each). A value out of the type's range matches no row.
                    limit = _LIMITS[array]
                    values, cast = [v for v in values if -limit <= v < limit], f"::{array}"
                if not values:
                    raise EmptyResultSet
                lhs, params = self.process_lhs(compiler, connection)
                return f"{lhs} = ANY(%s{cast})", (*params, values)
        return super().as_sql(compiler, connection)


# an integer column's array type and the bound of its values, the narrower classes first
# (BigIntegerField and SmallIntegerField are IntegerFields too)
_INTEGER_ARRAYS = ((BigIntegerField, "bigint[]", 1 << 63),
                   (SmallIntegerField, "smallint[]", 1 << 15),
                   (IntegerField, "integer[]", 1 << 31))
_LIMITS = {array: limit for _, array, limit in _INTEGER_ARRAYS}


def array_of(field):
    """The PostgreSQL array type of an integer column's values (a key's, a foreign key's), or
    None for any other column."""
    field = getattr(field, "target_field", None) if isinstance(field, ForeignObject) else field
    return next((array for kind, array, _ in _INTEGER_ARRAYS if isinstance(field, kind)), None)


class ArrayIn(_ArrayIn, In):
    pass


class RelatedArrayIn(_ArrayIn, RelatedIn):
    pass


class ILike(Lookup):
    """`field__ilike=PATTERN`: a LIKE pattern (patterns.like_pattern, `\\` escapes) matched
    case-insensitively, as `UPPER(field) LIKE UPPER(pattern)`.

    Spelled the same on every database, so on PostgreSQL the expression index on
    UPPER(granule_id) with text_pattern_ops (catalog migration 0004) serves a pattern with a
    literal prefix as an index range; SQLite scans."""

    lookup_name = "ilike"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"UPPER({lhs}) LIKE UPPER({rhs}) ESCAPE '\\'", (*lhs_params, *rhs_params)


def register():
    Field.register_lookup(ArrayIn)
    ForeignObject.register_lookup(RelatedArrayIn)
    CharField.register_lookup(ILike)
