"""Search at ten million granules (#22), PostgreSQL only (SQLite searches as before):

- granule_coll_band: archived granules by collection, latitude band of their south edge
  (catalog.stac_query.band_of: floor(south / 10)), then time, covering the window and box
  tests, so a shape search walks the few bands a box can meet in time order and stops at the
  page's end instead of walking every granule of its window;
- granule_coll_height: (collection, north - south), probed for a collection's tallest granule,
  which bounds how far below a box a granule meeting it can start.
"""
from django.db import migrations

INDEXES = {
    "granule_coll_band": "(collection_id, (floor(south / 10.0)), temporal_start, id) "
                         "INCLUDE (temporal_end, west, south, east, north) "
                         "WHERE state = 'archived'",
    "granule_coll_height": "(collection_id, (north - south))",
}


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for name, definition in INDEXES.items():
            schema_editor.execute(
                f"CREATE INDEX IF NOT EXISTS {name} ON catalog_granule {definition}")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for name in INDEXES:
            schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):

    dependencies = [
        ("catalog", "0008_collection_cadence"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
