"""Search indexes: a covering (collection, temporal_start, id) index, and on PostgreSQL one on
each granule's time span per collection, which bounds how far back a window's start reaches."""

from django.db import migrations, models

LENGTH_INDEX = "granule_coll_length"


def create_length_index(apps, schema_editor):
    # An expression index on SQLite would need Django's date functions in every client.
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE INDEX {LENGTH_INDEX} ON catalog_granule "
                              "(collection_id, (temporal_end - temporal_start))")


def drop_length_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {LENGTH_INDEX}")


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0001_initial'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='granule',
            name='granule_coll_start',
        ),
        migrations.AddIndex(
            model_name='granule',
            index=models.Index(fields=['collection', 'temporal_start', 'id'], include=('temporal_end', 'west', 'south', 'east', 'north', 'state'), name='granule_coll_time'),
        ),
        migrations.RunPython(create_length_index, drop_length_index),
    ]
