"""Destinations: the folders under the outbox and the SFTP servers push deliveries copy into,
checked field by field before they are stored."""
import ipaddress
import re
from pathlib import Path, PurePosixPath

from django.conf import settings

from backend.accounts.ownership import owned
from backend.errors import DomainError

from .. import targets
from ..models import Destination
from ..targets import HostKey, HostKeyError


def destination_of(user, destination_id):
    if destination_id in (None, ""):
        return None
    found = owned(Destination.objects.select_related("user"), user).filter(
        pk=destination_id).first()
    if found is None:
        raise DomainError(f"You have no destination {destination_id}.", "destination")
    return found


def outbox_root(user):
    """A user's own folder of the outbox, <outbox>/<username>: every folder destination of
    theirs lies inside it, so none can name another user's folder."""
    outbox = Path(settings.OUTBOX_ROOT)
    own = outbox / user.username
    if own.resolve().parent != outbox.resolve():
        raise DomainError(f"User name {user.username!r} cannot name a folder of the outbox.",
                          "path")
    return own


def destination_root(destination):
    """The folder a folder destination's deliveries go to: its path (blank: its name) inside
    the owner's own folder of the outbox. Push checks it is still inside (see FolderTarget)."""
    return outbox_root(destination.user) / (destination.path or destination.name)


def destination_location(destination):
    """Where a destination's deliveries go, as users read it."""
    if destination.kind == Destination.Kind.SFTP:
        return targets.sftp_location(destination.host, destination.port, destination.username,
                                     destination.path or ".")
    return str(destination_root(destination))


def check_destination_path(path):
    """A destination folder is given relative to the owner's own folder, without '..'."""
    parts = PurePosixPath(path or "").parts
    if path and (PurePosixPath(path).is_absolute() or ".." in parts):
        raise DomainError("path must be a relative folder inside your folder of the outbox, "
                          "without '..'.", "path")
    return path or ""


def check_inside_own_folder(owner, path, name):
    """The folder (path, or name when path is blank) must resolve, links followed, to a folder
    strictly inside the owner's own folder of the outbox."""
    own = outbox_root(owner)
    folder = own / (path or name or "")
    if not targets.lies_inside(folder, own):
        field = "path" if path else "name"
        raise DomainError(f"{field} must name a folder inside your folder of the outbox "
                          f"({own}).", field)


SFTP_FIELDS = ("host", "username", "host_key")
DESTINATION_FIELDS = ("kind", "path", "port", *SFTP_FIELDS)
_HOST_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"{_HOST_LABEL}(?:\.{_HOST_LABEL})*\.?")


def clean_destination(owner, fields, given):
    """The stored form of a destination's fields (`fields`: the current ones updated with the
    request's, `given`) for its owner, or a DomainError naming the field at fault."""
    kind = fields.get("kind") or Destination.Kind.FOLDER
    if kind == Destination.Kind.FOLDER:
        stray = [f for f in SFTP_FIELDS if given.get(f)]
        if stray:
            raise DomainError(f"Only SFTP destinations have a {stray[0]}; set kind to sftp.",
                              stray[0])
        path = check_destination_path(fields.get("path"))
        check_inside_own_folder(owner, path, fields.get("name"))
        return {"kind": kind, "path": path, "host": "", "port": 22, "username": "",
                "host_key": ""}
    try:
        host_key = HostKey.parse(fields.get("host_key")).text
    except HostKeyError as exc:
        raise DomainError(str(exc), "host_key") from exc
    return {"kind": kind, "path": _check_remote_path(fields.get("path")),
            "host": _check_host(fields.get("host")), "port": fields.get("port") or 22,
            "username": _check_username(fields.get("username")), "host_key": host_key}


def _check_host(value):
    host = (value or "").strip()
    if not host:
        raise DomainError("An SFTP destination needs the server's host name or address.", "host")
    try:
        return str(ipaddress.ip_address(host.removeprefix("[").removesuffix("]")))
    except ValueError:
        pass
    if "@" in host:
        raise DomainError("Give the host alone here and the user in username.", "host")
    if ":" in host:
        raise DomainError("Give the host alone here and the port in port.", "host")
    if len(host) > 253 or not _HOST_NAME.fullmatch(host):
        raise DomainError(f"{host!r} is not a host name or IP address.", "host")
    return host


def _check_username(value):
    username = (value or "").strip()
    if not username:
        raise DomainError("An SFTP destination needs the user Granary logs in as.", "username")
    if any(c.isspace() or not c.isprintable() or c in "@:/" for c in username):
        raise DomainError(f"{username!r} is not a user name.", "username")
    return username


def _check_remote_path(value):
    path = (value or "").strip()
    if any(not c.isprintable() for c in path):
        raise DomainError("path holds a control character.", "path")
    return path


def host_key_fingerprint(destination):
    return HostKey.parse(destination.host_key).fingerprint if destination.host_key else ""


def sftp_key():
    """Granary's public key for users' authorized_keys (made on first use)."""
    return targets.granary_public_key()


def delete_destination(destination):
    """Delete a destination no order or subscription uses."""
    if destination.orders.exists() or destination.subscriptions.exists():
        raise DomainError("Orders or subscriptions still use this destination.", "destination")
    destination.delete()
