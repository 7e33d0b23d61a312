"""Dashboards at ten million granules: the console list's created_at index, and the
per-collection, per-state granule counts with the PostgreSQL trigger that keeps them (the
vendor-guarded RunPython below; SQLite counts the granules instead)."""

import django.db.models.deletion
from django.db import migrations, models

from backend.dbtriggers import on_postgresql


TRIGGER = """
CREATE OR REPLACE FUNCTION catalog_granule_state_count() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.state = OLD.state
            AND NEW.collection_id = OLD.collection_id THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE catalog_granulestatecount SET count = count - 1
        WHERE collection_id = OLD.collection_id AND state = OLD.state;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO catalog_granulestatecount (collection_id, state, count)
        VALUES (NEW.collection_id, NEW.state, 1)
        ON CONFLICT (collection_id, state)
        DO UPDATE SET count = catalog_granulestatecount.count + 1;
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION catalog_granule_state_count_truncate() RETURNS trigger AS $$
BEGIN
    DELETE FROM catalog_granulestatecount;
    RETURN NULL;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER granule_state_count
    AFTER INSERT OR DELETE OR UPDATE OF state, collection_id ON catalog_granule
    FOR EACH ROW EXECUTE FUNCTION catalog_granule_state_count();
CREATE TRIGGER granule_state_count_truncate AFTER TRUNCATE ON catalog_granule
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_granule_state_count_truncate();

INSERT INTO catalog_granulestatecount (collection_id, state, count)
SELECT collection_id, state, count(*) FROM catalog_granule GROUP BY collection_id, state;
"""
class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0009_search_scale'),
    ]

    operations = [
        migrations.CreateModel(
            name='GranuleStateCount',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('state', models.CharField(choices=[('registered', 'Registered'), ('archiving', 'Archiving'), ('archived', 'Archived'), ('failed', 'Failed'), ('superseded', 'Superseded by a newer version'), ('withdrawn', 'Withdrawn (kept on tape, hidden; can be restored)'), ('deleted', 'Deleted')], max_length=12)),
                ('count', models.BigIntegerField(default=0)),
            ],
        ),
        migrations.AddIndex(
            model_name='granule',
            index=models.Index(fields=['created_at', 'id'], name='granule_created'),
        ),
        migrations.AddField(
            model_name='granulestatecount',
            name='collection',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.collection'),
        ),
        migrations.AddConstraint(
            model_name='granulestatecount',
            constraint=models.UniqueConstraint(fields=('collection', 'state'), name='granule_state_count_unique'),
        ),
        on_postgresql(TRIGGER, ['catalog_granule_state_count', 'catalog_granule_state_count_truncate'],
                      ['catalog_granule', 'granule_state_count', 'granule_state_count_truncate']),
    ]
