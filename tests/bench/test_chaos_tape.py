"""The chaos run's SCSI tape pieces (bench/chaos/tapelib.py on bench/tgt_library.py), without
the run: the virtual library killed -9 and started again on the same cartridges (a fresh tgtd,
what was written still there), a byte flipped in a cartridge's backing file and the copies'
bytes read from those files, and the barcodes the layout labels. The whole run: `manage.py
chaos --short --tape scsi` (minutes: not in the suite; docs/scsi-tape.md has its figures)."""
import hashlib
import io
import os
import socket
import subprocess

import pytest

from backend.archive.media.scsi.library import library_for
from backend.archive.media.scsitape import ScsiTapeVolume
from bench import tgt_library
from bench.chaos import tapelib
from tests.tape_fixtures import iscsi_port

pytestmark = [pytest.mark.once]


def test_the_layouts_labels_are_the_librarys_barcodes():
    assert tgt_library.barcodes(2, 3) == ["A00001", "A00002", "A00003",
                                      "B00001", "B00002", "B00003"]


def test_a_killed_library_starts_again_on_its_cartridges_and_a_flip_shows_in_the_stream(
        tmp_path):
    port = iscsi_port(3275)   # skips without tgt
    library = tapelib.TapeLibrary(tmp_path, port, 1, ["A00001", "A00002"], 8).start()
    try:
        volume = ScsiTapeVolume(library.config, "A00001")
        end = volume.format({"silo": "silo1"})
        body = os.urandom(300_000)
        writer = volume.writer(end)
        written = writer.add("member", io.BytesIO(body), len(body), "MD5", {})
        writer.close()
        first = library.pid
        library.kill()
        assert not (library.dir / "tgtd.pid").exists()
        library.start()
        assert library.pid != first
        library_for(library.config).reset()
        assert volume.read(written.data_offset, len(body), "MD5") == hashlib.md5(body).hexdigest()
        stream = tapelib.StreamFiles(library)
        assert stream.read("A00001", written.data_offset, len(body)) == body
        library.flip("A00001", written.data_offset + 10)
        fresh = tapelib.StreamFiles(library).read("A00001", written.data_offset, len(body))
        assert fresh[10] == body[10] ^ 0xFF and fresh[:10] + fresh[11:] == body[:10] + body[11:]
    finally:
        library_for(library.config).close()
        library.stop()


def test_a_librarys_port_is_one_tgtd_takes_as_its_control_number(tmp_path):
    """tgtd refuses a control number above 32767 and the script gives it the iSCSI port: the
    chaos run once asked the kernel for any free port (32768 and up here) and its library
    never started. A port is found below 32768, skipping one in use; a higher one is refused
    before any daemon starts, by the handle and by the script."""
    port = tgt_library.free_port(3300, 500)
    assert 3300 <= port <= tgt_library.PORT_MAX
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", port))
        busy.listen()
        assert tgt_library.free_port(port, 10) != port
    with pytest.raises(RuntimeError, match="no free iSCSI port"):
        tgt_library.free_port(tgt_library.PORT_MAX + 1, 10)
    with pytest.raises(ValueError, match="1..32767"):
        tgt_library.VirtualLibrary(tmp_path / "vtl", 40000, 1, ["A00001"], 8)
    answer = subprocess.run([str(tgt_library.SCRIPT), "start", str(tmp_path / "vtl"), "40000"],
                            capture_output=True, text=True)
    assert answer.returncode == 2 and "1..32767" in answer.stderr
    assert not (tmp_path / "vtl").exists()
