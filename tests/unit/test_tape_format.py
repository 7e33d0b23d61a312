"""Volumes are plain pax tar files that standard tar reads, with headers enough to rebuild."""
import hashlib
import io
import os
import subprocess

import pytest

from backend.archive import tape


def add(writer, name, data, **headers):
    return writer.add(name, io.BytesIO(data), len(data), "MD5", headers)


@pytest.fixture
def volume(tmp_path):
    path = tmp_path / "silo1" / "V00001"
    end = tape.label(str(path), "V00001", {"silo": "silo1"})
    return path, end


def test_tar_lists_and_extracts_a_volume(volume, tmp_path):
    path, end = volume
    data = {"MOD021KM.061/G1/a.hdf": os.urandom(3 * tape.BLOCK + 17), "MOD021KM.061/G1/a.met": b"x"}
    writer = tape.VolumeWriter(str(path), end)
    for name, body in data.items():
        written = add(writer, name, body, granule_id="G1", checksum_type="MD5")
        assert written.checksum == hashlib.md5(body).hexdigest()
    writer.close()

    listing = subprocess.run(["tar", "tvf", str(path)], capture_output=True, text=True, check=True)
    assert listing.stderr == ""
    names = [line.split()[-1] for line in listing.stdout.splitlines()]
    assert names == [tape.LABEL_NAME, *data]
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run(["tar", "xf", str(path), "-C", str(out)], check=True)
    for name, body in data.items():
        assert (out / name).read_bytes() == body


def test_scan_returns_headers_and_positions(volume):
    path, end = volume
    writer = tape.VolumeWriter(str(path), end)
    first = add(writer, "c/g/one", b"1" * 1000, granule_id="g", copy=1, checksum="abc")
    second = add(writer, "c/g/two", b"2" * 10, granule_id="g", copy=2)
    writer.close()
    members = tape.scan(str(path))
    assert members[0].is_label and members[0].headers["label"] == "V00001"
    one, two = members[1:]
    assert (one.position, one.data_offset, one.size) == (first.position, first.data_offset, 1000)
    assert one.headers == {"granule_id": "g", "copy": "1", "checksum": "abc"}
    assert two.data_offset == second.data_offset
    expected = hashlib.md5(b"2" * 10).hexdigest()
    assert tape.read(str(path), two.data_offset, two.size, "MD5") == expected


def test_append_after_a_torn_write_overwrites_it(volume):
    """A crash mid-write leaves junk past the recorded end; the next write truncates it."""
    path, end = volume
    writer = tape.VolumeWriter(str(path), end)
    add(writer, "c/g/torn", os.urandom(2 * tape.BLOCK))
    writer._write(bytes(writer._buffer))  # bytes reach the disk, then the process dies
    writer.abandon()
    assert os.path.getsize(path) > end

    writer = tape.VolumeWriter(str(path), end)
    add(writer, "c/g/good", b"good")
    writer.close()
    assert [m.name for m in tape.scan(str(path))] == [tape.LABEL_NAME, "c/g/good"]


def test_writes_go_out_in_large_blocks(volume, monkeypatch):
    path, end = volume
    sizes, real = [], os.pwrite

    def recording_pwrite(fd, data, offset):
        sizes.append(len(data))
        return real(fd, data, offset)

    monkeypatch.setattr(tape.os, "pwrite", recording_pwrite)
    writer = tape.VolumeWriter(str(path), end)
    for i in range(200):
        add(writer, f"c/g/small{i}", os.urandom(4096))
    writer.close()
    assert all(size >= 256 * 1024 for size in sizes[:-1])


def test_reading_a_missing_volume_is_a_clear_error(tmp_path):
    with pytest.raises(tape.VolumeError, match="is missing"):
        tape.read(str(tmp_path / "nope"), 0, 1, "MD5")


def test_source_shorter_than_declared_is_refused(volume):
    path, end = volume
    writer = tape.VolumeWriter(str(path), end)
    with pytest.raises(tape.VolumeError, match="ended 5 bytes early"):
        writer.add("c/g/short", io.BytesIO(b"12345"), 10, "MD5", {})
    writer.abandon()


def test_long_and_non_ascii_names_and_sizes_past_ustar_survive_standard_tar(volume, tmp_path):
    """Names longer than ustar's 100 bytes or outside ASCII travel in pax records, as does a
    size past ustar's 8 GiB field; GNU tar and Python's tarfile read them back."""
    path, end = volume
    long_name = "COLL.1/" + "g" * 120 + "/données-été.nc"
    writer = tape.VolumeWriter(str(path), end)
    add(writer, long_name, b"snow", file="données-été.nc")
    writer.close()
    listing = subprocess.run(["tar", "tvf", str(path)], capture_output=True, text=True, check=True)
    assert listing.stderr == ""
    assert listing.stdout.splitlines()[-1].endswith(long_name)
    members = tape.scan(str(path))
    assert members[-1].name == long_name and members[-1].headers["file"] == "données-été.nc"

    import tarfile

    huge = 9 * 2**30
    block = io.BytesIO(tape._header("big.dat", huge, {"copy": 1}))
    assert tarfile.TarInfo.frombuf(block.read(512), "utf-8", "strict").type == tarfile.XHDTYPE
    block.seek(0)
    info = tarfile.open(fileobj=io.BytesIO(block.read() + b"\0" * 1024), mode="r:").next()
    assert (info.name, info.size) == ("big.dat", huge)


def test_read_many_checks_small_and_large_members_in_one_pass(volume):
    """Small members share reads, a large one is streamed; each gets its own checksum, in the
    order asked, whatever the order on the volume."""
    path, end = volume
    writer = tape.VolumeWriter(str(path), end)
    bodies = [os.urandom(4096) for _ in range(50)] + [os.urandom(3 * tape.BLOCK + 5), b""]
    written = [writer.add(f"c/g/m{i}", io.BytesIO(b), len(b), "SHA256", {})
               for i, b in enumerate(bodies)]
    writer.close()
    asked = list(reversed(list(zip(written, bodies, strict=True))))
    digests = tape.read_many(str(path), [(w.data_offset, w.length, "SHA256") for w, _ in asked],
                             drop_cache=True, window=64 * 1024)
    assert digests == [hashlib.sha256(b).hexdigest() for _, b in asked]


def test_read_many_reports_a_torn_volume(volume):
    path, end = volume
    writer = tape.VolumeWriter(str(path), end)
    one = add(writer, "c/g/one", os.urandom(4096))
    writer.close()
    os.truncate(path, one.data_offset + 100)
    with pytest.raises(tape.VolumeError, match="ends at"):
        tape.read_many(str(path), [(one.data_offset, one.length, "MD5")])


def test_a_pack_is_a_tar_that_gnu_tar_and_tarfile_read_at_the_offsets_it_gives(tmp_path):
    """An object store's pack of small files: GNU tar extracts every member, and each member's
    bytes lie where the pack said (Python's tarfile finds the same data offsets)."""
    import tarfile

    members = {"C.1/G1/a.nc": os.urandom(4096), "C.1/G2/" + "é" * 80 + ".nc": os.urandom(1),
               "C.1/G3/empty.txt": b"", "C.1/G4/b.h5": os.urandom(70_001)}
    pack, where = tape.Pack(), {}
    for name, data in members.items():
        where[name] = pack.add(name, data, {"granule-id": name.split("/")[1], "copy": 1})
    body = pack.body()
    assert len(body) % tape.TAR_BLOCK == 0 and len(pack) + 2 * tape.TAR_BLOCK == len(body)
    for name, (_, data_offset) in where.items():
        assert body[data_offset:data_offset + len(members[name])] == members[name]
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:
        found = {m.name: m for m in tar.getmembers()}
        assert list(found) == list(members)
        for name, m in found.items():
            assert (m.offset, m.offset_data) == where[name]
            assert tar.extractfile(m).read() == members[name]
            assert m.pax_headers["SCHILY.xattr.user.granary.granule-id"] == name.split("/")[1]
    path = tmp_path / "pack.tar"
    path.write_bytes(body)
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(["tar", "xf", str(path), "-C", str(out)], check=True, capture_output=True)
    for name, data in members.items():
        assert (out / name).read_bytes() == data
