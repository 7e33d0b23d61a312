"""The queues board at scale: queued and running requests per kind, state and volume group,
kept by a PostgreSQL trigger (vendor-guarded; SQLite groups the requests instead)."""

from django.db import migrations, models

from backend.dbtriggers import on_postgresql


TRIGGER = """
CREATE OR REPLACE FUNCTION archive_queue_total() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.state = OLD.state AND NEW.kind = OLD.kind
            AND NEW.bytes_total = OLD.bytes_total
            AND NEW.volume_group_id IS NOT DISTINCT FROM OLD.volume_group_id THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state IN ('queued', 'running') THEN
        UPDATE archive_queuetotal SET requests = requests - 1,
                                      bytes_total = bytes_total - OLD.bytes_total
        WHERE kind = OLD.kind AND state = OLD.state
          AND group_id = coalesce(OLD.volume_group_id, 0);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.state IN ('queued', 'running') THEN
        INSERT INTO archive_queuetotal (kind, state, group_id, requests, bytes_total)
        VALUES (NEW.kind, NEW.state, coalesce(NEW.volume_group_id, 0), 1, NEW.bytes_total)
        ON CONFLICT (kind, state, group_id) DO UPDATE SET
            requests = archive_queuetotal.requests + 1,
            bytes_total = archive_queuetotal.bytes_total + EXCLUDED.bytes_total;
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION archive_queue_total_truncate() RETURNS trigger AS $$
BEGIN
    DELETE FROM archive_queuetotal;
    RETURN NULL;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER queue_total
    AFTER INSERT OR DELETE OR UPDATE OF state, kind, volume_group_id, bytes_total
    ON archive_archiverequest FOR EACH ROW EXECUTE FUNCTION archive_queue_total();
CREATE TRIGGER queue_total_truncate AFTER TRUNCATE ON archive_archiverequest
    FOR EACH STATEMENT EXECUTE FUNCTION archive_queue_total_truncate();

INSERT INTO archive_queuetotal (kind, state, group_id, requests, bytes_total)
SELECT kind, state, coalesce(volume_group_id, 0), count(*), sum(bytes_total)
FROM archive_archiverequest WHERE state IN ('queued', 'running') GROUP BY 1, 2, 3;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('archive', '0009_dashboard_scale_cache'),
    ]

    operations = [
        migrations.CreateModel(
            name='QueueTotal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(max_length=8)),
                ('state', models.CharField(max_length=10)),
                ('group_id', models.BigIntegerField(default=0)),
                ('requests', models.BigIntegerField(default=0)),
                ('bytes_total', models.BigIntegerField(default=0)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('kind', 'state', 'group_id'), name='queue_total_unique')],
            },
        ),
        on_postgresql(TRIGGER, ['archive_queue_total', 'archive_queue_total_truncate'],
                      ['archive_archiverequest', 'queue_total', 'queue_total_truncate']),
    ]
