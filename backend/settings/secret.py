"""The secret key of an install: given by the environment, or made at random on first run and
kept in the data root, so no two installs share one and none is written in the code."""
import os
import secrets
from pathlib import Path

KEY_FILE = "secret-key"


def secret_key(data_root, given=None):
    """`given` when set; else the key kept in `data_root`/secret-key, made on first use.

    Two processes starting together (web, worker, beat) agree on one key: each writes its
    own file and links it into place, and the one that loses the race reads the winner's.
    """
    if given:
        return given
    path = Path(data_root) / KEY_FILE
    if path.exists():
        return _read(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mine = path.with_name(f".{KEY_FILE}.{os.getpid()}")
    fd = os.open(mine, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_urlsafe(50) + "\n")
        out.flush()
        os.fsync(out.fileno())
    try:
        os.link(mine, path)
    except FileExistsError:
        pass
    finally:
        mine.unlink()
    return _read(path)


def _read(path):
    key = path.read_text().strip()
    if len(key) < 50:
        raise RuntimeError(f"{path} holds no usable secret key; delete it to make a new one.")
    return key
