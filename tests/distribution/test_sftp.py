"""Push delivery to SFTP destinations, against a real SFTP server (tests/sftp_server.py):
verified copies, a server that is down or drops the connection, a host key that is not the
pinned one, a key the server does not accept, and what the API refuses."""
import json
import os
import re
import stat

import asyncssh
import pytest

from backend.archive import services as archive
from backend.catalog import checksums
from distribution.models import Order
from distribution.services import orders, push, upkeep
from distribution.targets import PushError, key_path

pytestmark = pytest.mark.django_db

# Some server's ed25519 host key, as ssh-keyscan prints it.
SOME_HOST_KEY = ("[sftp.example.org]:2222 ssh-ed25519 "
                 "AAAAC3NzaC1lZDI1NTE5AAAAIEIvHjJyd6wBrgOznN1sPsB+7pFJtmQf0QuIcWTvvv+P")


def _granary_key(client):
    response = client.get("/api/v1/destinations/sftp-key/")
    assert response.status_code == 200, response.json()
    return response.json()["public_key"]


def _sftp_destination(client, server, **fields):
    data = {"name": "lab", "kind": "sftp", "host": "127.0.0.1", "port": server.port,
            "username": client.user.username, "path": "incoming",
            "host_key": server.known_hosts_line, **fields}
    response = client.post("/api/v1/destinations/", data, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def _push_order(client, granules, destination):
    """A ready push order whose push has not run yet (after-commit work is not carried out)."""
    response = client.post("/api/v1/orders/", {"granules": [g.pk for g in granules],
                                               "delivery": "push", "destination": destination},
                           format="json")
    assert response.status_code == 201, response.json()
    orders.refresh_order(response.json()["id"])
    return response.json()["id"]


def _delivered(folder, granules):
    """The files of `granules` under `folder` are whole by the catalog, and so are the
    manifest and the checksum list."""
    expected = {f"{g.granule_id}/{f.name}": f for g in granules for f in g.files.all()}
    for path, f in expected.items():
        digest, size = checksums.of_file(f.checksum_type, folder / path)
        assert size == f.size and checksums.same(f.checksum_type, digest, f.checksum), path
    manifest = json.loads((folder / "manifest.json").read_text())
    assert {row["path"] for row in manifest["files"]} == set(expected)
    lines = (folder / "CHECKSUMS").read_text().splitlines()
    assert sorted(lines) == sorted(f"{f.checksum_type} {f.checksum}  {path}"
                                   for path, f in expected.items())
    return sorted([*expected, "manifest.json", "CHECKSUMS"])


def _under(prefix, names):
    return sorted(f"{prefix}/{name}" for name in names)


def test_push_order_to_sftp_completes_with_verified_files(alice, collection, archived, inline,
                                                          sftp_server):
    sftp_server.start(authorized_keys=_granary_key(alice))
    dest = _sftp_destination(alice, sftp_server)
    port = sftp_server.port
    assert dest["folder"] == f"sftp://{alice.user.username}@127.0.0.1:{port}/~/incoming"
    assert dest["host_key"] == sftp_server.host_key.export_public_key().decode().strip()
    assert dest["host_key_fingerprint"] == (
        "SHA256:" + sftp_server.host_key.get_fingerprint("sha256").split(":", 1)[1])
    granules = archived(collection, 2, sizes=(300_000, 500))
    response = inline(alice.post, "/api/v1/orders/", {
        "granules": [g.pk for g in granules], "delivery": "push", "destination": dest["id"]},
        format="json")
    order = Order.objects.get(pk=response.json()["id"])
    assert order.state == "completed", order.error
    folder = sftp_server.root / "incoming" / f"order-{order.pk}"
    names = _delivered(folder, granules)
    assert sftp_server.files() == _under(f"incoming/order-{order.pk}", names)


def test_server_down_fails_clearly_then_the_push_completes_once(alice, collection, archived,
                                                                sftp_server):
    key = _granary_key(alice)
    sftp_server.start(authorized_keys=key).stop()
    dest = _sftp_destination(alice, sftp_server)
    [granule] = archived(collection, 1)
    order_id = _push_order(alice, [granule], dest["id"])

    with pytest.raises(PushError):
        push.push_order(order_id)
    shown = alice.get(f"/api/v1/orders/{order_id}/").json()
    assert shown["error"] == f"push: sftp host 127.0.0.1:{sftp_server.port} refused the connection"
    assert shown["state"] == "ready" and Order.objects.get(pk=order_id).push_attempts == 1
    assert sftp_server.files() == []

    sftp_server.start(authorized_keys=key)
    upkeep.sweep()
    order = Order.objects.get(pk=order_id)
    assert (order.state, order.error, order.push_attempts) == ("completed", "", 0)
    folder = sftp_server.root / "incoming" / f"order-{order_id}"
    delivered = sftp_server.files()
    assert delivered == _under(f"incoming/order-{order_id}", _delivered(folder, [granule]))
    assert push.push_order(order_id) == 0
    assert sftp_server.files() == delivered


def test_connection_lost_mid_upload_leaves_nothing_under_the_final_name(
        alice, collection, archived, sftp_server):
    sftp_server.start(authorized_keys=_granary_key(alice))
    sftp_server.drop_after_bytes = 100_000
    dest = _sftp_destination(alice, sftp_server)
    [granule] = archived(collection, 1, sizes=(400_000,))
    order_id = _push_order(alice, [granule], dest["id"])

    with pytest.raises(PushError):
        push.push_order(order_id)
    order = Order.objects.get(pk=order_id)
    partial = f"incoming/order-{order_id}/{granule.granule_id}/{granule.files.get().name}.partial"
    assert order.error.startswith(f"push: sftp host 127.0.0.1:{sftp_server.port}: writing "
                                  f"{partial}"), order.error
    assert order.push_attempts == 1
    assert sftp_server.files() == [partial]

    sftp_server.drop_after_bytes = None
    upkeep.sweep()
    assert Order.objects.get(pk=order_id).state == "completed"
    folder = sftp_server.root / "incoming" / f"order-{order_id}"
    assert sftp_server.files() == _under(f"incoming/order-{order_id}",
                                         _delivered(folder, [granule]))


def _lose_writes(server, file):
    server.lose_after_bytes = 100_000
    return (rf"the copy of {file.granule.granule_id}/{file.name} is not whole: "
            rf"\d{{5,6}} of {file.size} bytes arrived")


def _spoil_the_cached_copy(server, file):
    path = archive.cache_path(file)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    return (rf"{file.granule.granule_id}/{file.name} was not sent: The cached copy of "
            rf"{file.name} is damaged; it is recalled from tape\.")


def _rot_the_cached_copy(server, file):
    """As spoiled, with the file's times set back: only reading its bytes shows it (#34/20)."""
    before = archive.cache_path(file).stat()
    problem = _spoil_the_cached_copy(server, file)
    os.utime(archive.cache_path(file), ns=(before.st_atime_ns, before.st_mtime_ns))
    return problem


@pytest.mark.parametrize("spoil", [_lose_writes, _spoil_the_cached_copy, _rot_the_cached_copy])
def test_a_copy_that_is_not_whole_is_never_renamed_into_place(alice, collection, archived,
                                                              sftp_server, spoil):
    sftp_server.start(authorized_keys=_granary_key(alice))
    dest = _sftp_destination(alice, sftp_server)
    [granule] = archived(collection, 1, sizes=(400_000,))
    file = granule.files.get()
    problem = spoil(sftp_server, file)
    order_id = _push_order(alice, [granule], dest["id"])

    with pytest.raises(PushError):
        push.push_order(order_id)
    error = Order.objects.get(pk=order_id).error
    assert re.fullmatch(rf"push: {problem}", error)
    assert sftp_server.files() == []


@pytest.mark.parametrize("key_type, message", [
    ("ssh-ed25519", "does not match the pinned key"),
    ("ecdsa-sha2-nistp256", "has no ecdsa-sha2-nistp256 host key"),
])
def test_a_host_key_other_than_the_pinned_one_gets_nothing(alice, collection, archived,
                                                           sftp_server, key_type, message):
    sftp_server.start(authorized_keys=_granary_key(alice))
    other = asyncssh.generate_private_key(key_type).export_public_key().decode()
    dest = _sftp_destination(alice, sftp_server, host_key=other)
    [granule] = archived(collection, 1)
    order_id = _push_order(alice, [granule], dest["id"])

    with pytest.raises(PushError):
        push.push_order(order_id)
    error = Order.objects.get(pk=order_id).error
    assert error.startswith(f"push: the host key of sftp host 127.0.0.1:{sftp_server.port} "
                            if key_type == "ssh-ed25519" else "push: sftp host"), error
    assert message in error
    assert sftp_server.files() == []


def test_a_server_that_does_not_authorise_granarys_key_gets_a_clear_error(
        alice, collection, archived, sftp_server):
    stranger = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode()
    sftp_server.start(authorized_keys=stranger)
    dest = _sftp_destination(alice, sftp_server)
    [granule] = archived(collection, 1)
    order_id = _push_order(alice, [granule], dest["id"])

    with pytest.raises(PushError):
        push.push_order(order_id)
    assert Order.objects.get(pk=order_id).error == (
        f"push: authentication failed for {alice.user.username} on sftp host "
        f"127.0.0.1:{sftp_server.port}: add Granary's public key to that user's "
        "~/.ssh/authorized_keys")
    assert sftp_server.files() == []


def test_a_push_that_keeps_failing_fails_its_items(alice, collection, archived, sftp_server,
                                                   settings):
    settings.GRANARY_PUSH_MAX_ATTEMPTS = 2
    sftp_server.start(authorized_keys=_granary_key(alice)).stop()
    dest = _sftp_destination(alice, sftp_server)
    [granule] = archived(collection, 1)
    order_id = _push_order(alice, [granule], dest["id"])
    for _ in range(2):
        with pytest.raises(PushError):
            push.push_order(order_id)
    shown = alice.get(f"/api/v1/orders/{order_id}/").json()
    assert shown["state"] == "failed"
    assert shown["error"] == (f"push failed 2 times: sftp host 127.0.0.1:{sftp_server.port} "
                              "refused the connection")


def test_push_subscription_delivers_to_sftp(alice, collection, archived, sftp_server):
    sftp_server.start(authorized_keys=_granary_key(alice))
    dest = _sftp_destination(alice, sftp_server, path="/feeds/fires")
    sub = alice.post("/api/v1/subscriptions/", {
        "name": "fires", "collections": ["MOD021KM.061"], "mode": "push",
        "destination": dest["id"]}, format="json").json()
    granules = archived(collection, 2, sizes=(700,))
    folder = sftp_server.root / "feeds" / "fires" / f"subscription-{sub['id']}"
    assert sftp_server.files() == _under(f"feeds/fires/subscription-{sub['id']}",
                                         _delivered(folder, granules))


def test_granarys_key_is_made_once_and_kept_private(alice, bob):
    first = _granary_key(alice)
    assert first.startswith("ssh-ed25519 ") and " granary@" in first
    assert _granary_key(bob) == first
    assert stat.S_IMODE(key_path().stat().st_mode) == 0o600


def test_sftp_key_needs_a_login(api, data_root):
    assert api.get("/api/v1/destinations/sftp-key/").status_code in (401, 403)


def test_destinations_of_either_kind_are_created_and_updated(alice, data_root):
    response = alice.post("/api/v1/destinations/", {
        "name": "lab", "kind": "sftp", "host": "sftp.example.org", "port": 2222,
        "username": "alice", "path": "/data/in", "host_key": SOME_HOST_KEY + " root@server"},
        format="json")
    assert response.status_code == 201, response.json()
    made = response.json()
    assert made["host_key"] == SOME_HOST_KEY.split(" ", 1)[1]
    assert made["folder"] == "sftp://alice@sftp.example.org:2222/data/in"

    response = alice.patch(f"/api/v1/destinations/{made['id']}/", {"port": 22}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["folder"] == "sftp://alice@sftp.example.org:22/data/in"

    response = alice.patch(f"/api/v1/destinations/{made['id']}/",
                           {"kind": "folder", "path": "lab"}, format="json")
    assert response.status_code == 200, response.json()
    shown = response.json()
    assert (shown["kind"], shown["host"], shown["host_key"]) == ("folder", "", "")
    assert shown["folder"] == str(data_root / "outbox" / alice.user.username / "lab")


@pytest.mark.parametrize("fields, field, message", [
    ({"host": ""}, "host", "needs the server's host name or address"),
    ({"host": "alice@sftp.example.org"}, "host", "the user in username"),
    ({"host": "sftp.example.org:2222"}, "host", "the port in port"),
    ({"host": "sftp example"}, "host", "not a host name"),
    ({"port": 0}, "port", "greater than or equal to 1"),
    ({"port": 70000}, "port", "less than or equal to 65535"),
    ({"port": "ssh"}, "port", "valid integer"),
    ({"username": ""}, "username", "the user Granary logs in as"),
    ({"host_key": ""}, "host_key", "Pin the server's host key"),
    ({"host_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEIvHjJyd6"}, "host_key", "damaged"),
    ({"host_key": "ssh-dss AAAAB3NzaC1kc3M="}, "host_key", "type one of"),
    ({"host_key": f"{SOME_HOST_KEY}\n{SOME_HOST_KEY}"}, "host_key", "Paste one host key"),
    ({"kind": "ftp"}, "kind", "not a valid choice"),
    ({"kind": "folder", "path": "../etc", "host": "", "username": "", "host_key": ""}, "path",
     "without '..'"),
    ({"kind": "folder", "path": "lab"}, "host", "Only SFTP destinations have a host"),
])
def test_bad_destination_input_is_400_naming_the_field(alice, fields, field, message):
    data = {"name": "lab", "kind": "sftp", "host": "sftp.example.org", "port": 2222,
            "username": "alice", "path": "/data/in", "host_key": SOME_HOST_KEY, **fields}
    response = alice.post("/api/v1/destinations/", data, format="json")
    assert response.status_code == 400
    body = response.json()
    assert list(body["errors"]) == [field] and message in body["detail"], body
