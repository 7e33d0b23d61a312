# alerts.watch_queues asks whether a queue's requests started or finished lately: without this
# index PostgreSQL read every request of the kind (EXPLAIN: a scan of request_file on kind).
from django.db import migrations, models
from django.db.models.functions import Coalesce, Greatest


class Migration(migrations.Migration):

    dependencies = [
        ("archive", "0017_recall_shares_fair"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="archiverequest",
            index=models.Index(
                models.F("kind"), models.F("volume_group"),
                Greatest(Coalesce("started_at", "finished_at"),
                         Coalesce("finished_at", "started_at")),
                name="request_moved"),
        ),
    ]
