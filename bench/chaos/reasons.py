"""The chaos run's reason log: every reason the archive records on object work, caught as it
is written, so a reason that lasts a few milliseconds is seen too."""
import threading
import time
from dataclasses import dataclass

from django.db import OperationalError, close_old_connections, connection
from django.db.utils import InterfaceError

from .watch import with_db

REASON_WAIT_S = 90.0


@dataclass
class Change:
    """A request whose recorded reason became `error` at `at` (epoch s)."""

    at: float
    request_id: int
    file_id: int
    kind: str
    state: str
    error: str


# The run's own database only: a log of the reasons set on archive requests (object work, or a
# reason naming an object), written by a trigger in the transaction that sets them.
REASON_LOG = """
CREATE TABLE IF NOT EXISTS chaos_reason_log (
    id bigserial PRIMARY KEY, at double precision NOT NULL, request_id bigint NOT NULL,
    file_id bigint, kind text NOT NULL, state text NOT NULL, error text NOT NULL);
CREATE OR REPLACE FUNCTION chaos_log_reason() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.error <> '' AND (NEW.bucket_id IS NOT NULL OR NEW.error LIKE '%object%')
            AND (TG_OP = 'INSERT' OR NEW.error IS DISTINCT FROM OLD.error) THEN
        INSERT INTO chaos_reason_log (at, request_id, file_id, kind, state, error)
        VALUES (extract(epoch FROM clock_timestamp()), NEW.id, NEW.file_id, NEW.kind,
                NEW.state, NEW.error);
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS chaos_reason_log ON archive_archiverequest;
CREATE TRIGGER chaos_reason_log AFTER INSERT OR UPDATE OF error ON archive_archiverequest
    FOR EACH ROW EXECUTE FUNCTION chaos_log_reason();
"""


def install_reason_log():
    """Add the reason log to the run's database (after migrate)."""
    with connection.cursor() as cursor:
        cursor.execute(REASON_LOG)


class Reasons(threading.Thread):
    """Reads the reason log every `every` s, from a thread of its own: each reason set on a
    request, with when it was set."""

    def __init__(self, every=0.5):
        super().__init__(daemon=True, name="chaos-reasons")
        self.every, self.stopped = every, threading.Event()
        self.changes, self.last_id, self.samples, self.errors = [], 0, 0, 0

    def sample(self):
        with connection.cursor() as cursor:
            cursor.execute("SELECT id, at, request_id, file_id, kind, state, error "
                           "FROM chaos_reason_log WHERE id > %s ORDER BY id", [self.last_id])
            rows = cursor.fetchall()
        for row_id, at, request_id, file_id, kind, state, error in rows:
            self.changes.append(Change(at, request_id, file_id, kind, state, error))
            self.last_id = row_id
        self.samples += 1

    def run(self):
        try:
            while not self.stopped.wait(self.every):
                try:
                    close_old_connections()
                    self.sample()
                except (OperationalError, InterfaceError):
                    self.errors += 1   # the database is restarting
                    connection.close()
        finally:
            connection.close()

    def stop(self):
        """Stop after a last read."""
        self.stopped.set()
        self.join()
        with_db(self.sample)

    def find(self, phrase, since, until=None, files=None):
        return [c for c in list(self.changes)
                if phrase in c.error and c.at >= since and (until is None or c.at <= until)
                and (files is None or c.file_id in files)]

    def wait_for(self, phrase, since, timeout=REASON_WAIT_S, files=None):
        """The first change since `since` whose reason holds `phrase`, waiting up to timeout."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.find(phrase, since, files=files)
            if found or time.monotonic() > deadline:
                return found[0] if found else None
            time.sleep(0.25)
