"""Where push deliveries are written: a folder on this host, or a directory on a user's SFTP
server. Both offer the few file operations the push flow (services.push.push_order) needs, on
paths relative to the order's folder, so that flow is written once.

Granary logs in to SFTP servers with its own key pair, never with a user's password, and only
after the server has shown the host key pinned in the destination: an unknown key is refused,
never learnt (no trust on first use).
"""
import base64
import hashlib
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import paramiko
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from django.conf import settings


class PushError(Exception):
    """A push that failed and is worth retrying."""


# ---------------------------------------------------------------------------------------------
# Granary's own key pair


def key_path():
    return Path(settings.GRANARY_SFTP_KEY or Path(settings.DATA_ROOT) / "sftp" / "id_ed25519")


def granary_key():
    """Granary's private key for SFTP logins, made (ed25519) on first use."""
    path = key_path()
    if not path.exists():
        _generate_key(path)
    return paramiko.PKey.from_path(path)


def _generate_key(path):
    """Write a new key to `path` unless another process got there first: each writes its own
    temporary file and links it into place, so every process ends up with the same key."""
    pem = ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption())
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(pem)
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


def granary_public_key():
    """The line users add to their authorized_keys, and its fingerprint."""
    key = granary_key()
    host = urlsplit(settings.GRANARY_SITE_URL).hostname or "localhost"
    return {"public_key": f"{key.get_name()} {key.get_base64()} granary@{host}",
            "fingerprint": fingerprint(key.asbytes())}


def fingerprint(blob):
    """OpenSSH's SHA256 fingerprint of a public key blob, as `ssh-keygen -l` prints it."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


# ---------------------------------------------------------------------------------------------
# Pinned host keys

# The host key types accepted, with the algorithms that may be negotiated for each.
HOST_KEY_TYPES = {
    "ssh-ed25519": ("ssh-ed25519",),
    "ecdsa-sha2-nistp256": ("ecdsa-sha2-nistp256",),
    "ecdsa-sha2-nistp384": ("ecdsa-sha2-nistp384",),
    "ecdsa-sha2-nistp521": ("ecdsa-sha2-nistp521",),
    "ssh-rsa": ("rsa-sha2-512", "rsa-sha2-256"),
}


class HostKeyError(ValueError):
    """A host key that cannot be pinned, with a sentence saying why."""


@dataclass(frozen=True)
class HostKey:
    type: str
    blob: bytes

    @classmethod
    def parse(cls, text):
        """One public key in OpenSSH form: `<type> <base64> [comment]`, optionally after the
        host names of a known_hosts or ssh-keyscan line; `#` comment lines are skipped."""
        lines = [line.split() for line in str(text or "").splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
        if not lines:
            raise HostKeyError("Pin the server's host key: paste one line of `ssh-keyscan -p "
                               "PORT HOST` or the server's /etc/ssh/ssh_host_ed25519_key.pub.")
        if len(lines) > 1:
            raise HostKeyError(f"Paste one host key, not {len(lines)} lines (the ssh-ed25519 "
                               "one where the server has several).")
        words = lines[0]
        if words[0].startswith("@"):
            raise HostKeyError(f"A {words[0]} line cannot be pinned; paste the server's key.")
        at = next((i for i, w in enumerate(words) if w in HOST_KEY_TYPES), None)
        if at is None or at > 1 or at + 1 >= len(words):
            raise HostKeyError("A host key reads `<type> <base64>` with type one of "
                               f"{', '.join(HOST_KEY_TYPES)}.")
        kind, data = words[at], words[at + 1]
        try:
            serialization.load_ssh_public_key(f"{kind} {data}".encode())
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise HostKeyError(f"This {kind} host key is damaged: {exc}.") from exc
        return cls(kind, base64.b64decode(data))

    @property
    def text(self):
        return f"{self.type} {base64.b64encode(self.blob).decode()}"

    @property
    def fingerprint(self):
        return fingerprint(self.blob)


# ---------------------------------------------------------------------------------------------
# Targets


def lies_inside(folder, root):
    """Whether `folder`, links followed, is a folder strictly inside `root`."""
    real, top = Path(folder).resolve(), Path(root).resolve()
    return real != top and real.is_relative_to(top)


class FolderTarget:
    """A folder on this host's filesystem, which must lie inside `within` (its owner's own
    folder of the outbox) when the push starts: a link made since cannot lead it elsewhere."""

    def __init__(self, root, within=None):
        self.root = Path(root)
        self.within = within
        self.label = str(self.root)

    def __enter__(self):
        if self.within is not None and not lies_inside(self.root, self.within):
            raise PushError(f"{self.root} lies outside {self.within}; push refused.")
        return self

    def __exit__(self, *exc):
        return False

    def write(self, path, blocks):
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as out:
            for block in blocks:
                out.write(block)
            out.flush()
            os.fsync(out.fileno())

    def size(self, path):
        return (self.root / path).stat().st_size

    def replace(self, source, path):
        os.replace(self.root / source, self.root / path)

    def remove(self, path):
        (self.root / path).unlink(missing_ok=True)


_TRANSFER_ERRORS = (OSError, EOFError, paramiko.SSHException)


def _where(host, port):
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def sftp_location(host, port, username, root):
    """A folder on an SFTP server as users read it; a relative one under the login directory."""
    root = PurePosixPath(root)
    shown = root if root.is_absolute() else PurePosixPath("/~") / root
    return f"sftp://{username}@{_where(host, port)}{shown}"


class SftpTarget:
    """A directory on an SFTP server, logged in to with Granary's key once the server's host
    key is the pinned one. Every failure is a PushError that says what to fix."""

    def __init__(self, *, host, port, username, host_key, root, timeout):
        self.host, self.port, self.username = host, port, username
        self.host_key, self.timeout = host_key, timeout
        self.root = PurePosixPath(root)
        self.where = _where(host, port)
        self.label = sftp_location(host, port, username, self.root)
        self._transport = self._sftp = None
        self._made = set()

    def __enter__(self):
        key = granary_key()
        sock = self._connect()
        transport = paramiko.Transport(sock)
        try:
            options = transport.get_security_options()
            options.key_types = [t for t in options.key_types
                                 if t in HOST_KEY_TYPES[self.host_key.type]]
            self._start(transport, key)
            self._sftp = paramiko.SFTPClient.from_transport(transport)
            self._sftp.get_channel().settimeout(self.timeout)
        except PushError:
            transport.close()
            raise
        except _TRANSFER_ERRORS as exc:
            transport.close()
            raise PushError(f"sftp host {self.where}: {_reason(exc)}") from exc
        self._transport = transport
        return self

    def __exit__(self, *exc):
        self._transport.close()
        return False

    def _connect(self):
        try:
            return socket.create_connection((self.host, self.port), timeout=self.timeout)
        except ConnectionRefusedError as exc:
            raise PushError(f"sftp host {self.where} refused the connection") from exc
        except socket.gaierror as exc:
            raise PushError(f"sftp host {self.host} is not known ({exc.strerror})") from exc
        except TimeoutError as exc:
            raise PushError(f"sftp host {self.where} did not answer within "
                            f"{self.timeout:g} s") from exc
        except OSError as exc:
            raise PushError(f"sftp host {self.where} cannot be reached: {_reason(exc)}") from exc

    def _start(self, transport, key):
        """Negotiate, check the host key before sending anything, then log in."""
        try:
            transport.start_client(timeout=self.timeout)
        except paramiko.SSHException as exc:
            if "host key" in str(exc):
                raise PushError(f"sftp host {self.where} has no {self.host_key.type} host key, "
                                "the type pinned: pin one of the keys it has") from exc
            raise
        offered = transport.get_remote_server_key()
        if offered.asbytes() != self.host_key.blob:
            raise PushError(
                f"the host key of sftp host {self.where} does not match the pinned key (it "
                f"showed {fingerprint(offered.asbytes())}, the destination pins "
                f"{self.host_key.fingerprint}); nothing was sent. If the server's key really "
                "changed, pin the new one.")
        try:
            transport.auth_publickey(self.username, key)
        except paramiko.AuthenticationException as exc:
            raise PushError(
                f"authentication failed for {self.username} on sftp host {self.where}: add "
                "Granary's public key to that user's ~/.ssh/authorized_keys") from exc

    def _remote(self, path):
        return str(self.root / path)

    def _failed(self, what, path, exc):
        return PushError(f"sftp host {self.where}: {what} {path}: {_reason(exc)}")

    def _makedirs(self, folder):
        todo = []
        while str(folder) not in (".", "/", "") and str(folder) not in self._made:
            todo.append(folder)
            folder = folder.parent
        for folder in reversed(todo):
            try:
                self._sftp.stat(str(folder))
            except FileNotFoundError:
                self._sftp.mkdir(str(folder))
            self._made.add(str(folder))

    def write(self, path, blocks):
        remote = self._remote(path)
        try:
            self._makedirs(PurePosixPath(remote).parent)
            with self._sftp.open(remote, "wb") as out:
                out.set_pipelined(True)
                for block in blocks:
                    out.write(block)
        except _TRANSFER_ERRORS as exc:
            raise self._failed("writing", remote, exc) from exc

    def size(self, path):
        remote = self._remote(path)
        try:
            return self._sftp.stat(remote).st_size
        except _TRANSFER_ERRORS as exc:
            raise self._failed("checking", remote, exc) from exc

    def replace(self, source, path):
        remote = self._remote(path)
        try:
            self._sftp.posix_rename(self._remote(source), remote)
        except _TRANSFER_ERRORS as exc:
            raise self._failed("renaming into", remote, exc) from exc

    def remove(self, path):
        remote = self._remote(path)
        try:
            self._sftp.remove(remote)
        except FileNotFoundError:
            pass
        except _TRANSFER_ERRORS as exc:
            raise self._failed("removing", remote, exc) from exc


def _reason(exc):
    return str(exc).rstrip(": ") or type(exc).__name__
