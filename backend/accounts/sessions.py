"""The session engine (SESSION_ENGINE): Django's database sessions, whose read also brings
the signed-in user and the names of the user's groups, in the same query, so authenticating a
portal request is one query, not three (session, user, roles: issue #33). What the request
may do is decided as before: accounts.signed_in hands this user to Django's get_user, which
checks the session's user id, backend and password hash and the user's is_active as always,
and the roles are those the database holds at this request. The read's statement is compiled
once per connection (backend.fixed_reads): its ORM compile cost four times its answer."""
import logging

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.backends import db
from django.core.exceptions import SuspiciousOperation
from django.utils import timezone

from backend.fixed_reads import FixedRead

from . import roles


def _user_fields():
    return [field.attname for field in get_user_model()._meta.concrete_fields]


def _with_user(session, data):
    """`session` (a row to save) naming the user its data signs in, if any."""
    user_id = data.get(SESSION_KEY)
    session.user_id = None if user_id is None else get_user_model()._meta.pk.to_python(user_id)
    return session


def _read(session_key):
    """The session's row with its user's fields and one row per group name of the user (its
    expiry is checked by the caller: the statement stays the same at every call)."""
    from .models import SignedInSession

    return SignedInSession.objects.filter(session_key=session_key).values_list(
        "session_data", "expire_date", *(f"user__{name}" for name in _user_fields()),
        "user__groups__name")


_READ = FixedRead(_read, [str])


class SessionStore(db.SessionStore):
    """signed_in: the user whose id the session's row names, with the user's roles known
    (roles.roles_of asks nothing more), or None; read with the session."""

    signed_in = None

    @classmethod
    def get_model_class(cls):
        from .models import SignedInSession

        return SignedInSession

    def create_model_instance(self, data):
        return _with_user(super().create_model_instance(data), data)

    async def acreate_model_instance(self, data):
        return _with_user(await super().acreate_model_instance(data), data)

    def _get_session_from_db(self):
        fields, self.signed_in = _user_fields(), None
        try:
            rows = _READ.rows(self.session_key, using=self.model.objects.db)
        except SuspiciousOperation as exc:
            logging.getLogger(f"django.security.{type(exc).__name__}").warning(str(exc))
            rows = []
        if not rows or rows[0][1] <= timezone.now():      # none, or expired
            self._session_key = None
            return None
        first = rows[0]
        user_values = first[2:-1]
        if user_values[fields.index("password")] is not None:    # the user's row was found
            user = get_user_model().from_db(self.model.objects.db, fields, user_values)
            roles.settle(user, {row[-1] for row in rows if row[-1] is not None})
            self.signed_in = user
        return self.model(session_key=self.session_key, session_data=first[0],
                          expire_date=first[1])
