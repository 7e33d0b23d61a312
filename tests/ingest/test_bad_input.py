"""Bad input: each gets a clear error, and nothing is archived or half-written."""
import errno

import pytest

from backend.archive.models import ArchiveRequest, CacheEntry
from backend.catalog.models import File, Granule
from ingest import names
from ingest.models import IngestGranule, IngestRequest, Pdr
from tests.factories import CollectionFactory
from tests.ingest.builders import area, granule, s4pa_pdr, stage, stage_pdr_group

pytestmark = pytest.mark.django_db

URL = "/api/v1/ingest/requests/"


def assert_nothing_archived(settings):
    assert not Granule.objects.exists() and not File.objects.exists()
    assert not CacheEntry.objects.exists() and not ArchiveRequest.objects.exists()
    assert not any(p.is_file() for p in settings.CACHE_ROOT.rglob("*"))


def assert_refused(answer, status, *words):
    assert answer.status_code == status, answer.content
    detail = answer.json()["detail"]
    for word in words:
        assert word in detail, detail
    assert not IngestRequest.objects.exists() and not IngestGranule.objects.exists()


def one(provider, collection, **changes):
    spec = granule(collection, "G1", [stage(provider, "in/G1.dat")])
    spec["files"][0].update(changes)
    return spec


def test_malformed_json(client, settings):
    answer = client.post(URL, '{"granules": [{"collection": ', content_type="application/json")
    assert_refused(answer, 400, "JSON parse error")
    assert_nothing_archived(settings)


@pytest.mark.parametrize("body", [[], "granules", {"granule": []}])
def test_body_that_is_not_a_request(client, body, settings):
    assert_refused(client.post(URL, body, format="json"), 400)
    assert_nothing_archived(settings)


def test_request_of_no_granules(client, settings):
    assert_refused(client.post(URL, {"granules": []}, format="json"), 400,
                   "The request has no granules; send at least one.")
    assert_nothing_archived(settings)


@pytest.mark.parametrize(("changes", "words"), [
    ({"checksum_type": "CRC64"}, "unsupported checksum type 'CRC64'; use one of MD5, SHA256"),
    ({"checksum": ""}, "checksum is missing"),
    ({"path": "../MOTHER/secret.dat"}, "climbs out with '..'"),
    ({"path": "in/../../x.dat"}, "climbs out with '..'"),
    ({"path": "/etc/passwd"}, "is absolute; give it relative to your staging area"),
    ({"name": "../x.dat"}, "has a '/'"),
    ({"path": "in/G\u00e9.dat", "name": "G\u00e9.dat"}, "has non-ASCII characters"),
    ({"path": "in/G\x07.dat"}, "has control characters"),
    ({"size": 0}, "is empty (size 0); empty files are not archived"),
    ({"size": -5}, "size must be a whole number of bytes"),
    ({"size": "12"}, "size must be a whole number of bytes"),
    ({"role": "picture"}, "role 'picture' is not one of"),
])
def test_bad_file_specs(client, provider, collection, settings, changes, words):
    answer = client.post(URL, {"granules": [one(provider, collection, **changes)]}, format="json")
    assert_refused(answer, 400, "granules[0].files[0]", words)
    assert_nothing_archived(settings)


@pytest.mark.parametrize(("changes", "words"), [
    # sizes the database cannot hold (a 500 before) or no disk holds
    ({"size": 2**70}, f"size {2**70} is more than the {2**53} bytes a file may have"),
    ({"size": 2**53 + 1}, "bytes a file may have"),
    # a name the cache cannot name its copy by ("<id>-<name>.incoming" within 255 bytes):
    # accepted with 202, then "File name too long" in the cache, before
    ({"name": "n" * 251, "path": "in/" + "n" * 251}, "the archive takes names of at most 226"),
    ({"name": "n" * 227, "path": "in/" + "n" * 227}, "the archive takes names of at most 226"),
])
def test_file_specs_beyond_what_the_archive_holds(client, provider, collection, settings,
                                                  changes, words):
    answer = client.post(URL, {"granules": [one(provider, collection, **changes)]}, format="json")
    assert_refused(answer, 400, "granules[0].files[0]", words)
    assert_nothing_archived(settings)


def test_files_whose_sizes_add_up_past_64_bits_are_refused(client, provider, collection):
    specs = [one(provider, collection, size=2**53) for _ in range(1025)]
    for i, spec in enumerate(specs):
        spec["granule_id"] = f"G{i}"
    assert_refused(client.post(URL, {"granules": specs}, format="json"), 400,
                   "split it")


def test_the_longest_file_name_taken_goes_through_the_cache(client, provider, collection,
                                                            drain):
    """226 characters: its cache copy is named and written like any other's."""
    name = "n" * 222 + ".dat"
    spec = granule(collection, "G1", [stage(provider, f"in/{name}")])
    assert client.post(URL, {"granules": [spec]}, format="json").status_code == 202
    drain()
    assert Granule.objects.get().state == Granule.State.ARCHIVED
    assert File.objects.get().name == name


def test_the_file_name_limit_is_what_the_file_system_takes_for_the_cache_copy(tmp_path):
    """The cache's name for a file with the largest id, written as '.incoming' first: the
    longest name taken fits the file system, one more character does not."""
    largest_id = 2**63 - 1
    fits = tmp_path / f"{largest_id}-{'n' * names.MAX_FILE_NAME}.incoming"
    fits.write_bytes(b"x")
    too_long = tmp_path / f"{largest_id}-{'n' * (names.MAX_FILE_NAME + 1)}.incoming"
    with pytest.raises(OSError) as caught:
        too_long.write_bytes(b"x")
    assert caught.value.errno == errno.ENAMETOOLONG


def test_json_nested_100000_levels_deep_is_a_json_400(client):
    body = "[" * 100_000 + "]" * 100_000
    answer = client.post(URL, body, content_type="application/json")
    assert answer.status_code == 400 and answer["Content-Type"] == "application/json"
    assert "nested deeper than" in answer.json()["detail"]


def test_json_nested_deeper_than_any_document_is_a_400(client, provider, collection):
    spec = one(provider, collection)
    deep = {}
    inner = deep
    for _ in range(40):
        inner["a"] = {}
        inner = inner["a"]
    spec["attributes"] = deep
    answer = client.post(URL, {"granules": [spec]}, format="json")
    assert answer.status_code == 400 and "nested deeper than" in answer.json()["detail"]
    assert not IngestRequest.objects.exists()


@pytest.mark.parametrize(("changes", "words"), [
    ({"granule_id": ""}, "granule_id is empty"),
    ({"granule_id": "a/b"}, "has a '/'"),
    ({"granule_id": "G\u00fc"}, "non-ASCII"),
    ({"collection": "MOD021KM"}, "give the collection as SHORT.VERSION"),
    ({"collection": "NOPE.001"}, "unknown collection NOPE.001"),
    ({"files": []}, "a granule needs at least one file"),
    ({"temporal": {"start": "last week"}}, "is not an ISO 8601 date and time"),
    ({"temporal": {"start": "2024-01-02T00:00:00Z", "end": "2024-01-01T00:00:00Z"}},
     "is before start"),
    ({"bbox": [0, 100, 1, 1]}, "latitudes must lie within -90..90"),
    ({"bbox": [1, 2]}, "give [west, south, east, north]"),
])
def test_bad_granule_specs(client, provider, collection, settings, changes, words):
    spec = one(provider, collection)
    spec.update(changes)
    assert_refused(client.post(URL, {"granules": [spec]}, format="json"), 400, words)
    assert_nothing_archived(settings)


def test_duplicate_file_names_in_a_granule(client, provider, collection, settings):
    spec = granule(collection, "G1", [stage(provider, "a/G1.dat"), stage(provider, "b/G1.dat")])
    assert_refused(client.post(URL, {"granules": [spec]}, format="json"), 400,
                   "granules[0].files[1]: duplicate file name G1.dat in the granule")
    assert_nothing_archived(settings)


def test_duplicate_granules_in_a_request(client, provider, collection, settings):
    specs = [granule(collection, "G1", [stage(provider, "a/G1.dat")]),
             granule(collection, "G1", [stage(provider, "b/G1.dat")])]
    assert_refused(client.post(URL, {"granules": specs}, format="json"), 400,
                   "granules[1]: duplicate granule MOD021KM.061:G1 (also granules[0])")
    assert_nothing_archived(settings)


def test_collection_the_provider_may_not_deliver(client, provider, collection, settings):
    other = CollectionFactory(short_name="MYD021KM", version="061")
    specs = [granule(collection, "G1", [stage(provider, "a/G1.dat")]),
             granule(other, "G2", [stage(provider, "a/G2.dat")])]
    assert_refused(client.post(URL, {"granules": specs}, format="json"), 403,
                   "Provider MODAPS may not deliver MYD021KM.061")
    assert_nothing_archived(settings)


def test_many_problems_are_listed_together(client, provider, collection):
    specs = [one(provider, collection, size=0), one(provider, collection, checksum_type="X")]
    specs[1]["granule_id"] = "G2"
    answer = client.post(URL, {"granules": specs}, format="json")
    assert answer.status_code == 400
    assert len(answer.json()["errors"]) == 2


# Faults found once the bytes are looked at: the granule fails with its reason, others go on.


@pytest.mark.parametrize(("mutate", "disposition", "words"), [
    (lambda spec, path: spec["files"][0].update(size=spec["files"][0]["size"] + 1),
     "POST-TRANSFER FILE SIZE CHECK FAILURE", "declared 1001 bytes, found 1000 in staging"),
    (lambda spec, path: path.write_bytes(b""),
     "POST-TRANSFER FILE SIZE CHECK FAILURE", "declared 1000 bytes, found 0 in staging"),
    (lambda spec, path: spec["files"][0].update(checksum="d41d8cd98f00b204e9800998ecf8427e"),
     "CHECKSUM VERIFICATION FAILURE", "MD5 checksum is"),
    (lambda spec, path: path.unlink(),
     "ALL FILE GROUPS/FILES NOT FOUND", "not found in the staging area of MODAPS: in/G1.dat"),
])
def test_bytes_that_do_not_match(client, provider, collection, settings, drain,
                                 mutate, disposition, words):
    bad = one(provider, collection)
    mutate(bad, area(provider) / "in/G1.dat")
    good = granule(collection, "G2", [stage(provider, "in/G2.dat")])
    answer = client.post(URL, {"granules": [bad, good]}, format="json")
    assert answer.status_code == 202
    drain()
    failed = IngestGranule.objects.get(granule_id="G1")
    assert failed.state == "failed" and failed.disposition == disposition
    assert words in failed.reason, failed.reason
    assert failed.catalog_granule is None
    assert not Granule.objects.filter(granule_id="G1").exists()
    assert Granule.objects.get(granule_id="G2").state == Granule.State.ARCHIVED
    assert IngestRequest.objects.get().state == "failed"


def test_link_out_of_the_staging_area(client, provider, collection, tmp_path, drain):
    secret = tmp_path / "secret.dat"
    secret.write_bytes(b"x" * 1000)
    spec = one(provider, collection)
    link = area(provider) / "in/G1.dat"
    link.unlink()
    link.symlink_to(secret)
    client.post(URL, {"granules": [spec]}, format="json")
    drain()
    failed = IngestGranule.objects.get()
    assert failed.state == "failed" and "leads out of the staging area" in failed.reason
    assert not Granule.objects.exists()


def test_granule_without_temporal_anywhere(client, provider, collection, drain):
    spec = granule(collection, "G1", [stage(provider, "in/G1.dat")], temporal=False)
    client.post(URL, {"granules": [spec]}, format="json")
    drain()
    failed = IngestGranule.objects.get()
    assert failed.disposition == "METADATA PREPROCESSING ERROR"
    assert "no temporal coverage" in failed.reason
    assert not Granule.objects.exists()


def test_collection_without_archive_policy(client, provider, settings, drain):
    bare = CollectionFactory(short_name="BARE", version="1")
    provider.collections.add(bare)
    client.post(URL, {"granules": [granule(bare, "G1", [stage(provider, "in/G1.dat")])]},
                format="json")
    drain()
    failed = IngestGranule.objects.get()
    assert failed.disposition == "DATA ARCHIVE ERROR"
    assert "has no archive policy; an operator must give it one" in failed.reason
    assert_nothing_archived(settings)


# PDRs that cannot be accepted: a PDRD, in the API answer and in the staging area.

PDR_URL = "/api/v1/ingest/pdrs/"


def post_pdr(client, text, name="MODAPS.2024001.PDR"):
    return client.post(PDR_URL, {"name": name, "text": text}, format="json")


def good_groups(provider):
    return [("MOD021KM", stage_pdr_group(provider, "/data/MOD021KM/2024/001",
                                         "MOD021KM.A2024001.0005.061"))]


@pytest.mark.parametrize(("edit", "disposition", "words", "form"), [
    (lambda t: t.replace("TOTAL_FILE_COUNT = 2;", "TOTAL_FILE_COUNT = 5;"),
     "INVALID FILE COUNT", "TOTAL_FILE_COUNT is 5 but the PDR lists 2 files", "SHORTPDRD"),
    (lambda t: t.replace("TOTAL_FILE_COUNT = 2;\n", ""),
     "INVALID FILE COUNT", "TOTAL_FILE_COUNT is missing", "SHORTPDRD"),
    (lambda t: t.replace("DATA_TYPE = MOD021KM;", "DATA_TYPE = MOD99;"),
     "INVALID DATA TYPE", "unknown DATA_TYPE MOD99 DATA_VERSION 061", "LONGPDRD"),
    (lambda t: t.replace("FILE_TYPE = METADATA;", "FILE_TPYE = METADATA;"),
     "INVALID PVL STATEMENT", "unknown keyword FILE_TPYE (did you mean FILE_TYPE?)",
     "SHORTPDRD"),
    (lambda t: t.replace("FILE_SIZE = 4000;", "FILE_SIZE = 4kB;"),
     "INVALID FILE SIZE", "FILE_SIZE is missing or not a whole number", "LONGPDRD"),
    (lambda t: t.replace("EXPIRATION_TIME = 2099-01-10T12:00:00Z;", "EXPIRATION_TIME = soon;"),
     "INVALID PVL STATEMENT", "EXPIRATION_TIME 'soon' is not an ISO 8601", "SHORTPDRD"),
    (lambda t: t.replace("FILE_CKSUM_TYPE = MD5;", "FILE_CKSUM_TYPE = CRC64;", 1),
     "INVALID CHECKSUM TYPE", "unsupported checksum type 'CRC64'", "LONGPDRD"),
    (lambda t: t.replace("DIRECTORY_ID = /data/MOD021KM/2024/001;", "DIRECTORY_ID = /data/../..;",
                         1), "INVALID DIRECTORY", "climbs out with '..'", "LONGPDRD"),
    (lambda t: t.replace("DESCRIPTOR = NOT USED;", "DESCRIPTOR = NOT USED"),
     "INVALID PVL STATEMENT", "missing its ';'", "SHORTPDRD"),
])
def test_pdr_refused_with_pdrd(client, provider, collection, settings, edit, disposition,
                               words, form):
    text = edit(s4pa_pdr(good_groups(provider)))
    answer = post_pdr(client, text)
    assert answer.status_code == 400, answer.json()
    body = answer.json()
    assert body["detail"].startswith(f"The PDR was refused ({disposition}): ")
    assert words in body["detail"]
    assert body["state"] == "rejected" and body["disposition"] == disposition
    assert body["pdrd"].startswith(f"MESSAGE_TYPE = {form};")
    assert disposition in body["pdrd"]
    written = area(provider) / "MODAPS.2024001.PDRD"
    assert written.read_text() == body["pdrd"]
    assert not IngestRequest.objects.exists()
    assert_nothing_archived(settings)
    # the same PDR again is answered by the same PDRD, not a second record
    assert post_pdr(client, text).json()["id"] == body["id"]
    assert Pdr.objects.count() == 1


def test_pdr_with_a_collection_the_provider_may_not_deliver(client, provider, settings):
    CollectionFactory(short_name="MYD021KM", version="061")
    text = s4pa_pdr([("MYD021KM", stage_pdr_group(provider, "/d", "MYD021KM.A2024001"))])
    body = post_pdr(client, text).json()
    assert body["disposition"] == "INVALID DATA TYPE"
    assert "provider MODAPS may not deliver MYD021KM.061" in body["detail"]
    assert_nothing_archived(settings)


def test_pdr_that_is_not_text(client, provider):
    answer = client.post(PDR_URL + "?name=X.PDR", b"\xff\xfe\x00garbage",
                         content_type="text/plain")
    assert answer.status_code == 400
    assert answer.json()["detail"] == "A PDR is ASCII text; this body is not."
    assert not Pdr.objects.exists()
