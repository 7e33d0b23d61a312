import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.utils import timezone

BACKEND = "backend.accounts.signed_in.SessionUserBackend"


def carry_sessions(apps, schema_editor):
    """The live sessions of Django's table move here, with their user and the new backend's
    name, so nobody is signed out by the upgrade."""
    from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    old = apps.get_model("sessions", "Session")
    new = apps.get_model("accounts", "SignedInSession")
    codec = SessionStore()
    for session in old.objects.filter(expire_date__gt=timezone.now()).iterator():
        data = codec.decode(session.session_data)
        user_id = data.get(SESSION_KEY)
        if user_id is not None:
            data[BACKEND_SESSION_KEY] = BACKEND
        new.objects.create(
            session_key=session.session_key, session_data=codec.encode(data),
            expire_date=session.expire_date,
            user_id=int(user_id) if str(user_id or "").isdigit() else None)


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0004_oidc_tokens'),
        ('sessions', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='SignedInSession',
            fields=[
                ('session_key', models.CharField(max_length=40, primary_key=True, serialize=False, verbose_name='session key')),
                ('session_data', models.TextField(verbose_name='session data')),
                ('expire_date', models.DateTimeField(db_index=True, verbose_name='expire date')),
                ('user', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'session',
                'verbose_name_plural': 'sessions',
                'abstract': False,
            },
        ),
        migrations.RunPython(carry_sessions, migrations.RunPython.noop),
    ]
