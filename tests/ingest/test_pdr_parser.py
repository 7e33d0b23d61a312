"""PDRs as providers really write them, read by the pvl-based parser; PDRD and PAN text."""
from datetime import UTC, datetime

import pvl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest import pdr, pvl_text

S4PA = """ORIGINATING_SYSTEM = S4PA;
TOTAL_FILE_COUNT = 3;
EXPIRATION_TIME = 2024-01-10T12:00:00Z;
DESCRIPTOR = NOT USED;
OBJECT=FILE_GROUP;
   DATA_TYPE = MOD021KM;
   DATA_VERSION = 061;
   NODE_NAME = s4pa.example.org;
   DESCRIPTOR = NOT USED;
   BEGINNING_DATE/TIME = 2024-01-01T00:05:00Z;
   ENDING_DATE/TIME = 2024-01-01T00:10:00Z;
   OBJECT = FILE_SPEC;
      DIRECTORY_ID = /data/MOD021KM/2024/001;
      FILE_ID = MOD021KM.A2024001.0005.061.hdf;
      FILE_TYPE = SCIENCE;
      FILE_SIZE = 4000;
      FILE_CKSUM_TYPE = MD5;
      FILE_CKSUM_VALUE = 0f343b0931126a20f133d67c2b018a3b;
   END_OBJECT = FILE_SPEC;
   OBJECT = FILE_SPEC;
      DIRECTORY_ID = /data/MOD021KM/2024/001;
      FILE_ID = MOD021KM.A2024001.0005.061.hdf.met;
      FILE_TYPE = METADATA;
      FILE_SIZE = 00120;
   END_OBJECT = FILE_SPEC;
END_OBJECT=FILE_GROUP;
OBJECT = FILE_GROUP;
   DATA_TYPE = MOD03;
   DATA_VERSION = 00;
   NODE_NAME = s4pa.example.org;
   OBJECT = FILE_SPEC;
      DIRECTORY_ID = /data/MOD03;
      FILE_ID = MOD03.A2024001.0005.hdf;
      FILE_TYPE = SCIENCE;
      FILE_SIZE = 10;
   END_OBJECT = FILE_SPEC;
END_OBJECT = FILE_GROUP;
"""


def test_pvl_alone_rejects_real_pdrs_and_types_versions():
    with pytest.raises(ValueError):
        pvl.loads(S4PA)
    assert pvl.loads("DATA_VERSION = 061;")["DATA_VERSION"] == 61


def test_s4pa_pdr_keeps_values_as_text():
    doc = pdr.read_pdr(S4PA)
    assert doc.originating_system == "S4PA"
    assert doc.total_file_count == 3
    assert doc.expiration_time == datetime(2024, 1, 10, 12, tzinfo=UTC)
    assert doc.extras == {"DESCRIPTOR": "NOT USED"}
    first, second = doc.groups
    assert (first.data_type, first.data_version) == ("MOD021KM", "061")
    assert first.collection_key == "MOD021KM.061"
    assert second.data_version == "00"
    assert first.extras["BEGINNING_DATE/TIME"] == "2024-01-01T00:05:00Z"
    assert first.extras["DESCRIPTOR"] == "NOT USED"
    science, met = first.files
    assert science.path == "data/MOD021KM/2024/001/MOD021KM.A2024001.0005.061.hdf"
    assert science.role == "data" and met.role == "metadata"
    assert science.cksum_value == "0f343b0931126a20f133d67c2b018a3b"
    assert met.file_size == 120 and met.cksum_type == ""
    assert all(g.disposition == pdr.SUCCESSFUL for g in doc.groups)


@pytest.mark.parametrize(("change", "disposition", "words"), [
    (("TOTAL_FILE_COUNT = 3;", "TOTAL_FILE_COUNT = 4;"), pdr.INVALID_FILE_COUNT,
     "TOTAL_FILE_COUNT is 4 but the PDR lists 3 files"),
    (("TOTAL_FILE_COUNT = 3;\n", ""), pdr.INVALID_FILE_COUNT, "TOTAL_FILE_COUNT is missing"),
    (("TOTAL_FILE_COUNT = 3;", "TOTAL_FILE_COUNT = three;"), pdr.INVALID_FILE_COUNT,
     "not a whole number"),
    (("ORIGINATING_SYSTEM = S4PA;\n", ""), pdr.INVALID_ORIGINATING_SYSTEM, "missing"),
    (("      FILE_SIZE = 00120;", "      FILE_SIZ = 00120;"), pdr.INVALID_PVL,
     "unknown keyword FILE_SIZ (did you mean FILE_SIZE?)"),
    (("ORIGINATING_SYSTEM", "ORIGINATNG_SYSTEM"), pdr.INVALID_PVL,
     "did you mean ORIGINATING_SYSTEM?"),
    (("END_OBJECT=FILE_GROUP;", ""), pdr.INVALID_PVL, "never closed"),
    (("   DATA_TYPE = MOD03;", "   DATA_TYPE = MOD03;\n   DATA_TYPE = MOD04;"), pdr.INVALID_PVL,
     "DATA_TYPE is given twice"),
    (("EXPIRATION_TIME = 2024-01-10T12:00:00Z;", "EXPIRATION_TIME = next tuesday;"),
     pdr.INVALID_PVL, "EXPIRATION_TIME 'next tuesday' is not an ISO 8601"),
    (("      FILE_SIZE = 10;", "      FILE_SIZE = 10"), pdr.INVALID_PVL, "missing its ';'"),
])
def test_pdr_wide_faults_are_refused_with_short_pdrd(change, disposition, words):
    with pytest.raises(pdr.PdrRejected) as caught:
        pdr.read_pdr(S4PA.replace(*change))
    assert caught.value.disposition == disposition
    assert words in caught.value.detail


@pytest.mark.parametrize("text", ["", "   \n", "this is not PVL", "A = ;\nB"])
def test_garbage_is_invalid_pvl(text):
    with pytest.raises(pdr.PdrRejected) as caught:
        pdr.read_pdr(text)
    assert caught.value.disposition == pdr.INVALID_PVL


@pytest.mark.parametrize(("change", "disposition"), [
    (("FILE_SIZE = 10;", "FILE_SIZE = ten;"), pdr.INVALID_FILE_SIZE),
    (("FILE_SIZE = 10;", "FILE_SIZE = 0;"), pdr.INVALID_FILE_SIZE),
    # a size no database column holds (the request failed with a 500 before)
    (("FILE_SIZE = 10;", f"FILE_SIZE = {2**70};"), pdr.INVALID_FILE_SIZE),
    # a name the cache cannot name its copy by
    (("FILE_ID = MOD03.A2024001.0005.hdf;", f"FILE_ID = {'M' * 247}.hdf;"), pdr.INVALID_FILE_ID),
    (("DIRECTORY_ID = /data/MOD03;", "DIRECTORY_ID = /data/../../etc;"), pdr.INVALID_DIRECTORY),
    (("FILE_ID = MOD03.A2024001.0005.hdf;", "FILE_ID = ../MOD03.hdf;"), pdr.INVALID_FILE_ID),
    (("FILE_ID = MOD03.A2024001.0005.hdf;", "FILE_ID = MOD03.\u00e9t\u00e9.hdf;"),
     pdr.INVALID_FILE_ID),
    (("FILE_TYPE = SCIENCE;\n      FILE_SIZE = 10;", "FILE_TYPE = PICTURE;\n      FILE_SIZE = 10;"),
     pdr.INVALID_FILE_TYPE),
    (("   DATA_VERSION = 00;\n", ""), pdr.INVALID_DATA_VERSION),
])
def test_file_group_faults_mark_the_group(change, disposition):
    doc = pdr.read_pdr(S4PA.replace(*change))
    first, second = doc.groups
    assert first.disposition == pdr.SUCCESSFUL
    assert second.disposition == disposition
    assert second.detail.startswith("FILE_GROUP 2:")
    text = pdr.long_pdrd(doc.groups)
    parsed = pdr.parse_pvl(text)
    assert parsed.value("MESSAGE_TYPE") == "LONGPDRD"
    assert parsed.value("NO_FILE_GRPS") == "2"
    assert parsed.values("FILE_GRP_DISPOSITION") == ["SUCCESSFUL", disposition]


def test_duplicate_file_in_group():
    text = S4PA.replace("FILE_ID = MOD021KM.A2024001.0005.061.hdf.met;",
                        "FILE_ID = MOD021KM.A2024001.0005.061.hdf;")
    assert pdr.read_pdr(text).groups[0].disposition == pdr.DUPLICATE_FILE_NAME


def test_short_pdrd_and_pans_are_pvl():
    short = pdr.parse_pvl(pdr.short_pdrd(pdr.INVALID_FILE_COUNT))
    assert short.value("MESSAGE_TYPE") == "SHORTPDRD"
    assert short.value("DISPOSITION") == "INVALID FILE COUNT"
    when = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    ok = pdr.parse_pvl(pdr.pan([("/d", "a.hdf", pdr.SUCCESSFUL)], when))
    assert ok.value("MESSAGE_TYPE") == "SHORTPAN"
    assert ok.value("TIME_STAMP") == "2024-01-02T03:04:05Z"
    mixed = pdr.parse_pvl(pdr.pan([("/d", "a.hdf", pdr.SUCCESSFUL),
                                   ("/d", "b.hdf", pdr.CHECKSUM_FAILURE)], when))
    assert mixed.value("MESSAGE_TYPE") == "LONGPAN"
    assert mixed.values("FILE_NAME") == ["a.hdf", "b.hdf"]
    assert mixed.values("DISPOSITION") == ["SUCCESSFUL", "CHECKSUM VERIFICATION FAILURE"]


def test_odl_met_with_newlines_comments_and_sequences():
    root = pdr.parse_pvl("""GROUP = INVENTORYMETADATA
  /* a comment; with a semicolon-free body */
  OBJECT = MEASUREDPARAMETER
    VALUE = ("a", "b c",
             "d")
    NOTE = provider's own note
  END_OBJECT = MEASUREDPARAMETER
END_GROUP = INVENTORYMETADATA
END
""")
    [group] = root.children("INVENTORYMETADATA")
    [obj] = group.children("MEASUREDPARAMETER")
    assert obj.value("VALUE").startswith('("a", "b c",')
    assert obj.value("NOTE") == "provider's own note"


def test_mismatched_end_is_reported_with_its_line():
    with pytest.raises(pdr.PvlError, match="line 3"):
        pdr.parse_pvl("OBJECT = A;\n  X = 1;\nEND_OBJECT = B;\n")


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="AB =;_/.-\n\r\t 0", max_size=80),
       terminator=st.sampled_from([";", "\n"]))
def test_a_text_without_quotes_comments_or_parentheses_is_cut_as_the_scanner_cuts_it(
        text, terminator):
    """The split taken for plain text gives the statements, their first lines and the count of
    cuts that the scanner (which handles quotes, comments and parentheses) gives."""
    assert pvl_text._cut(text, terminator) == pvl_text._cut_scanning(text, terminator)


def test_a_text_with_a_quote_or_comment_is_still_scanned():
    text = 'A = "x;y";\n/* a; b */ B = (1;2);\nC = 3'
    assert pvl_text._cut(text, ";") == ([(1, 'A = "x;y"'), (2, "B = (1;2)"), (3, "C = 3")], 2)
