"""The archive board's cache gauge at scale: bytes and entries per cache state, kept by a
PostgreSQL trigger (the vendor-guarded RunPython below; SQLite sums the entries instead)."""

from django.db import migrations, models

from backend.dbtriggers import on_postgresql


TRIGGER = """
CREATE OR REPLACE FUNCTION archive_cache_state_total() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.state = OLD.state AND NEW.size = OLD.size THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE archive_cachestatetotal SET bytes = bytes - OLD.size, entries = entries - 1
        WHERE state = OLD.state;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO archive_cachestatetotal (state, bytes, entries)
        VALUES (NEW.state, NEW.size, 1)
        ON CONFLICT (state) DO UPDATE SET
            bytes = archive_cachestatetotal.bytes + EXCLUDED.bytes,
            entries = archive_cachestatetotal.entries + 1;
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION archive_cache_state_total_truncate() RETURNS trigger AS $$
BEGIN
    DELETE FROM archive_cachestatetotal;
    RETURN NULL;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER cache_state_total
    AFTER INSERT OR DELETE OR UPDATE OF state, size ON archive_cacheentry
    FOR EACH ROW EXECUTE FUNCTION archive_cache_state_total();
CREATE TRIGGER cache_state_total_truncate AFTER TRUNCATE ON archive_cacheentry
    FOR EACH STATEMENT EXECUTE FUNCTION archive_cache_state_total_truncate();

INSERT INTO archive_cachestatetotal (state, bytes, entries)
SELECT state, sum(size), count(*) FROM archive_cacheentry GROUP BY state;
"""
class Migration(migrations.Migration):

    dependencies = [
        ('archive', '0008_dashboard_scale'),
    ]

    operations = [
        migrations.CreateModel(
            name='CacheStateTotal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('state', models.CharField(choices=[('staging', 'Bytes arriving'), ('dirty', 'Dirty (not yet on tape)'), ('clean', 'Clean'), ('pinned', 'Pinned (clean, kept)')], max_length=8, unique=True)),
                ('bytes', models.BigIntegerField(default=0)),
                ('entries', models.BigIntegerField(default=0)),
            ],
        ),
        on_postgresql(TRIGGER, ['archive_cache_state_total', 'archive_cache_state_total_truncate'],
                      ['archive_cacheentry', 'cache_state_total', 'cache_state_total_truncate']),
    ]
