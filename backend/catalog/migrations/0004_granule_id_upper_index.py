"""An index for granule id searches on PostgreSQL: UPPER(granule_id) with text_pattern_ops,
so `UPPER(granule_id) LIKE UPPER('MOD021KM.A2024%')` (lookups.ILike) is an index range and an
exact id an index probe, case-insensitive, whatever the database's collation. SQLite has no
use for it (its LIKE does not read expression indexes) and gets none. Kept out of the model's
Meta because an operator class on an expression cannot be spelled there for both databases."""
from django.db import migrations

NAME = "granule_id_upper"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {NAME} ON catalog_granule "
            "(UPPER(granule_id) text_pattern_ops)")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {NAME}")


class Migration(migrations.Migration):

    dependencies = [
        ("catalog", "0003_fewer_write_indexes"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
