"""The files' own index on granule goes: file_name_unique (granule, name) serves every lookup
by granule, and each index costs every file's insert (#33). Only the index is dropped: the
foreign key stays as it is (Django's AlterField would drop and re-check it over every file)."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("catalog", "0013_completeness_days_web"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(
                'DROP INDEX IF EXISTS "catalog_file_granule_id_0031e123"',
                reverse_sql='CREATE INDEX "catalog_file_granule_id_0031e123" '
                            'ON "catalog_file" ("granule_id")')],
            state_operations=[migrations.AlterField(
                model_name="file",
                name="granule",
                field=models.ForeignKey(db_index=False,
                                        on_delete=django.db.models.deletion.CASCADE,
                                        related_name="files", to="catalog.granule"),
            )],
        ),
    ]
