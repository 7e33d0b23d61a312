"""The queues board at scale: pending requests in a partial covering index of their own."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('archive', '0007_reconciliation'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='archiverequest',
            index=models.Index(condition=models.Q(('state__in', ['queued', 'running'])), fields=['kind', 'state', 'volume_group', 'created_at'], include=('bytes_total', 'bytes_done', 'id'), name='request_pending'),
        ),
    ]
