"""The pattern of a failure reason, tested directly on the sentences the services write: the same
cause with other ids, names, paths, sizes and checksums is one pattern; another cause is not."""
import pytest

from console.reasons import KEY_PATTERN, group_key, normalise

# (one cause written twice about different things, the pattern an operator reads)
SAME_CAUSE = [
    ("MOD021KM.A2024001.0005.061.hdf: MD5 checksum is 0cc175b9c0f1b6a831c399e269772661, the "
     "provider declared d41d8cd98f00b204e9800998ecf8427e",
     "G7.dat: MD5 checksum is 9f86d081884c7d659a2feaa0c55ad015, the provider declared "
     "60303ae22b998861bce3b28f33eec1be",
     "<name>: MD5 checksum is <hex>, the provider declared <hex>"),
    ("G1.dat: declared 1001 bytes, found 1000 in staging",
     "MOD021KM.A2024001.0010.061.hdf: declared 3000000 bytes, found 0 in staging",
     "<name>: declared <n> bytes, found <n> in staging"),
    ("not found in the staging area of MODAPS: in/G1.dat",
     "not found in the staging area of MODAPS: demo-traffic/a.hdf, demo-traffic/b.hdf, x/y/c",
     "not found in the staging area of MODAPS: <path>"),
    ("in/G1.dat leads out of the staging area through a link",
     "/srv/staging/MODAPS/x.hdf leads out of the staging area through a link",
     "<path> leads out of the staging area through a link"),
    ("temporal end 2024-01-01 00:00:00+00:00 is before start 2024-01-02 00:00:00+00:00",
     "temporal end 2023-12-31T23:59:59.5Z is before start 2024-01-01T00:00:00Z",
     "temporal end <time> is before start <time>"),
    ("collection MOD021KM.061 has no archive policy; an operator must give it one",
     "collection BARE.1 has no archive policy; an operator must give it one",
     "collection <name> has no archive policy; an operator must give it one"),
    ("granule G1 version 2 is still archiving; retry once it is archived",
     "granule MOD09GA.A2024001.h10v05.061 version 12 is still archiving; retry once it is "
     "archived",
     "granule <name> version <n> is still archiving; retry once it is archived"),
    ("volume L00012: media error (injected)", "volume B00003: media error (injected)",
     "volume <name>: media error (injected)"),
    ("drive silo1-d1: injected write fault", "drive silo2-d4: injected write fault",
     "drive <name>: injected write fault"),
    ("no usable copy of G1.0.dat on L00003", "no usable copy of MOD.A2024.hdf on B00001",
     "no usable copy of <name> on <name>"),
    ("read-back from L00001 does not match the catalog checksum",
     "read-back from L00077 does not match the catalog checksum",
     "read-back from <name> does not match the catalog checksum"),
    ("push failed 5 times: [Errno 20] Not a directory: '/data/outbox/alice/lab/order-3'",
     "push failed 7 times: [Errno 20] Not a directory: '/data/outbox/bob/x/order-19.partial'",
     "push failed <n> times: [Errno <n>] Not a directory: '<path>'"),
    ("G1.0.dat (123456 bytes) is larger than the whole cache (1000 bytes): it cannot be staged",
     "b.hdf (9 bytes) is larger than the whole cache (8 bytes): it cannot be staged",
     "<name> (<n> bytes) is larger than the whole cache (<n> bytes): it cannot be staged"),
    ("gave up after 5 attempts: the worker stopped each time while handling this granule",
     "gave up after 3 attempts: the worker stopped each time while handling this granule",
     "gave up after <n> attempts: the worker stopped each time while handling this granule"),
    ("recall failed: no usable copy of G1.0.dat on L00003",
     "recall failed: no usable copy of G2.0.dat on B00002",
     "recall failed: no usable copy of <name> on <name>"),
    ("unexpected error: job 3f2504e0-4f89-11d3-9a0c-0305e82c3301 vanished",
     "unexpected error: job 16fd2706-8baf-433b-82eb-8c7fada847da vanished",
     "unexpected error: job <id> vanished"),
]


@pytest.mark.parametrize(("one", "other", "expected"), SAME_CAUSE)
def test_one_cause_written_about_different_things_is_one_pattern(one, other, expected):
    assert normalise(one) == expected
    assert normalise(other) == expected


def test_a_granule_with_several_bad_files_of_one_kind_is_the_same_cause_as_one():
    one = "a.dat: MD5 checksum is 0cc175b9c0f1b6a831c399e269772661, the provider declared " \
          "d41d8cd98f00b204e9800998ecf8427e"
    three = "; ".join(one.replace("a.dat", name) for name in ("a.dat", "b.met", "c.png"))
    assert normalise(three) == normalise(one)


def test_two_causes_in_one_reason_stay_apart_in_the_order_met():
    reason = ("a.dat: declared 5 bytes, found 4 in staging; b.dat: MD5 checksum is "
              "0cc175b9c0f1b6a831c399e269772661, the provider declared "
              "d41d8cd98f00b204e9800998ecf8427e")
    assert normalise(reason) == ("<name>: declared <n> bytes, found <n> in staging; <name>: MD5 "
                                 "checksum is <hex>, the provider declared <hex>")


@pytest.mark.parametrize(("one", "other"), [
    ("G1.dat: declared 1001 bytes, found 1000 in staging",
     "G1.dat: MD5 checksum is 0cc175b9c0f1b6a831c399e269772661, the provider declared "
     "d41d8cd98f00b204e9800998ecf8427e"),
    ("unknown collection FOO.1", "collection FOO.1 has no archive policy; an operator must give "
                                 "it one"),
    ("volume L00012: media error (injected)", "drive silo1-d1: injected write fault"),
    ("unsupported checksum type 'CRC64'; use one of MD5, SHA256",
     "unsupported checksum type 'CRC32'; use one of MD5, SHA256"),
    ("alice may no longer see MOD021KM.061", "the bytes read from the cache fail its catalog "
                                             "checksum"),
    # a checksum's algorithm and an OS error's words are part of the cause: kept as written
    ("a.dat: MD5 checksum is 0cc175b9c0f1b6a831c399e269772661, the provider declared "
     "d41d8cd98f00b204e9800998ecf8427e",
     "a.dat: SHA256 checksum is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
     ", the provider declared 60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"),
    ("push failed 5 times: [Errno 20] Not a directory: '/o/a'",
     "push failed 5 times: [Errno 13] Permission denied: '/o/a'"),
])
def test_different_causes_are_different_patterns(one, other):
    assert normalise(one) != normalise(other)


def test_words_without_digits_are_kept_and_spaces_tidied():
    assert normalise("  the mover   stopped before finishing; requeued  ") == \
        "the mover stopped before finishing; requeued"
    assert normalise("superseded: the same work is queued already") == \
        "superseded: the same work is queued already"


@pytest.mark.parametrize("empty", ["", None, "   ", ";", "; ;"])
def test_no_reason_is_a_pattern_of_its_own(empty):
    assert normalise(empty) == "(no reason recorded)"


def test_a_huge_reason_gives_a_bounded_pattern():
    pattern = normalise("word " * 10000)
    assert len(pattern) <= 300 and pattern.endswith("…")


def test_group_keys_are_stable_short_and_tell_places_apart():
    key = group_key("ingest", "granule", "<name>: declared <n> bytes")
    assert key == group_key("ingest", "granule", "<name>: declared <n> bytes")
    assert KEY_PATTERN.fullmatch(key)
    assert key != group_key("archive", "migrate", "<name>: declared <n> bytes")
    assert key != group_key("ingest", "granule", "<name>: declared <n> bytes!")
