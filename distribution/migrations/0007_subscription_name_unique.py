"""Subscription names are unique per user whatever their case. Names that already clash are
told apart first: the oldest keeps its name, the others get " (2)", " (3)" ... added."""
import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models

MAX_NAME = 120


def rename_clashes(apps, schema_editor):
    Subscription = apps.get_model("distribution", "Subscription")
    kept, clashing = {}, []
    for sub in Subscription.objects.order_by("user_id", "created_at", "id"):
        names = kept.setdefault(sub.user_id, set())
        if sub.name.lower() in names:
            clashing.append(sub)
        else:
            names.add(sub.name.lower())
    for sub in clashing:
        names, n = kept[sub.user_id], 2
        while True:
            suffix = f" ({n})"
            name = sub.name[: MAX_NAME - len(suffix)] + suffix
            if name.lower() not in names:
                break
            n += 1
        names.add(name.lower())
        Subscription.objects.filter(pk=sub.pk).update(name=name)


class Migration(migrations.Migration):

    dependencies = [
        ('distribution', '0006_destination_path_in_own_folder'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(rename_clashes, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='subscription',
            constraint=models.UniqueConstraint(django.db.models.functions.text.Lower('name'), models.F('user'), name='subscription_user_name_unique'),
        ),
    ]
