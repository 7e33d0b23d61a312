"""A folder destination's path is now inside its owner's own folder of the outbox: a stored
path that already started with the owner's <username>/ loses that prefix, so it keeps naming
the same folder; any other path now names a folder inside the owner's own one."""
from django.db import migrations, models


def inside_own_folder(apps, schema_editor):
    Destination = apps.get_model("distribution", "Destination")
    for destination in Destination.objects.filter(kind="folder").exclude(path="").select_related(
            "user"):
        prefix = f"{destination.user.username}/"
        if destination.path.startswith(prefix):
            destination.path = destination.path[len(prefix):].strip("/")
            destination.save(update_fields=["path"])


class Migration(migrations.Migration):

    dependencies = [
        ("distribution", "0005_destination_sftp"),
    ]

    operations = [
        migrations.AlterField(
            model_name="destination",
            name="path",
            field=models.CharField(
                blank=True, max_length=255,
                help_text="folder: inside the owner's own folder of the outbox <username>/, "
                          "blank for <name>; sftp: remote directory, absolute or relative to "
                          "the login directory (blank: that one)"),
        ),
        migrations.RunPython(inside_own_folder, migrations.RunPython.noop),
    ]
