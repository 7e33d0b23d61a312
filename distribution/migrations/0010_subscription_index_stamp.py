"""The stamp matching's in-memory tables are checked against (models.SubscriptionIndexStamp),
kept by triggers on every insert, update and delete of SubscriptionCollection; the partial
indexes the per-granule SQL query read are gone with that query."""
from django.db import migrations, models

TABLE = "distribution_subscriptioncollection"
STAMP = "distribution_subscriptionindexstamp"

POSTGRESQL = f"""
CREATE SEQUENCE distribution_subscription_index_token;
CREATE FUNCTION distribution_subscription_index_touched() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    fresh bigint := nextval('distribution_subscription_index_token');
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO {STAMP} (collection_id, token)
            SELECT DISTINCT collection_id, fresh FROM new_rows
            ON CONFLICT (collection_id) DO UPDATE SET token = EXCLUDED.token;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        INSERT INTO {STAMP} (collection_id, token)
            SELECT DISTINCT collection_id, fresh FROM old_rows
            ON CONFLICT (collection_id) DO UPDATE SET token = EXCLUDED.token;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER subscription_index_inserted AFTER INSERT ON {TABLE}
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION distribution_subscription_index_touched();
CREATE TRIGGER subscription_index_updated AFTER UPDATE ON {TABLE}
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION distribution_subscription_index_touched();
CREATE TRIGGER subscription_index_deleted AFTER DELETE ON {TABLE}
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION distribution_subscription_index_touched();
"""
POSTGRESQL_REVERSE = f"""
DROP TRIGGER subscription_index_inserted ON {TABLE};
DROP TRIGGER subscription_index_updated ON {TABLE};
DROP TRIGGER subscription_index_deleted ON {TABLE};
DROP FUNCTION distribution_subscription_index_touched();
DROP SEQUENCE distribution_subscription_index_token;
"""


def _sqlite_touch(row):
    return (f"INSERT INTO {STAMP} (collection_id, token) VALUES ({row}.collection_id, random()) "
            "ON CONFLICT (collection_id) DO UPDATE SET token = excluded.token;")


SQLITE = [
    f"CREATE TRIGGER subscription_index_inserted AFTER INSERT ON {TABLE} "
    f"BEGIN {_sqlite_touch('NEW')} END",
    f"CREATE TRIGGER subscription_index_updated AFTER UPDATE ON {TABLE} "
    f"BEGIN {_sqlite_touch('OLD')} {_sqlite_touch('NEW')} END",
    f"CREATE TRIGGER subscription_index_deleted AFTER DELETE ON {TABLE} "
    f"BEGIN {_sqlite_touch('OLD')} END",
]
SQLITE_REVERSE = [f"DROP TRIGGER subscription_index_{event}"
                  for event in ("inserted", "updated", "deleted")]


def triggers(apps, schema_editor):
    _run(schema_editor, POSTGRESQL if schema_editor.connection.vendor == "postgresql"
         else SQLITE)


def drop_triggers(apps, schema_editor):
    _run(schema_editor, POSTGRESQL_REVERSE if schema_editor.connection.vendor == "postgresql"
         else SQLITE_REVERSE)


def _run(schema_editor, sql):
    for statement in [sql] if isinstance(sql, str) else sql:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('distribution', '0009_subscription_geometry'),
    ]

    operations = [
        migrations.CreateModel(
            name='SubscriptionIndexStamp',
            fields=[
                ('collection_id', models.BigIntegerField(primary_key=True, serialize=False)),
                ('token', models.BigIntegerField()),
            ],
        ),
        migrations.RemoveIndex(
            model_name='subscriptioncollection',
            name='subscription_coll_nobox',
        ),
        migrations.RemoveIndex(
            model_name='subscriptioncollection',
            name='subscription_coll_box',
        ),
        migrations.RunPython(triggers, drop_triggers),
    ]
