"""Deliveries for ingest tests: files in a provider's staging area, bulk specs, S4PA-style PDRs."""
import hashlib
import os
from datetime import UTC, datetime, timedelta

from django.conf import settings

from backend.catalog import checksums

MET = """GROUP                  = INVENTORYMETADATA
  GROUPTYPE            = MASTERGROUP

  GROUP                  = ECSDATAGRANULE
    OBJECT                 = LOCALGRANULEID
      NUM_VAL              = 1
      VALUE                = "{granule_id}"
    END_OBJECT             = LOCALGRANULEID
  END_GROUP              = ECSDATAGRANULE

  GROUP                  = RANGEDATETIME
    OBJECT                 = RANGEBEGINNINGDATE
      NUM_VAL              = 1
      VALUE                = "2024-01-01"
    END_OBJECT             = RANGEBEGINNINGDATE
    OBJECT                 = RANGEBEGINNINGTIME
      NUM_VAL              = 1
      VALUE                = "00:05:00.000000"
    END_OBJECT             = RANGEBEGINNINGTIME
    OBJECT                 = RANGEENDINGDATE
      NUM_VAL              = 1
      VALUE                = "2024-01-01"
    END_OBJECT             = RANGEENDINGDATE
    OBJECT                 = RANGEENDINGTIME
      NUM_VAL              = 1
      VALUE                = "00:10:00.000000"
    END_OBJECT             = RANGEENDINGTIME
  END_GROUP              = RANGEDATETIME

  GROUP                  = SPATIALDOMAINCONTAINER
    GROUP                  = HORIZONTALSPATIALDOMAINCONTAINER
      GROUP                  = BOUNDINGRECTANGLE
        OBJECT                 = WESTBOUNDINGCOORDINATE
          NUM_VAL              = 1
          VALUE                = -20.5
        END_OBJECT             = WESTBOUNDINGCOORDINATE
        OBJECT                 = NORTHBOUNDINGCOORDINATE
          NUM_VAL              = 1
          VALUE                = 40.0
        END_OBJECT             = NORTHBOUNDINGCOORDINATE
        OBJECT                 = EASTBOUNDINGCOORDINATE
          NUM_VAL              = 1
          VALUE                = 10.25
        END_OBJECT             = EASTBOUNDINGCOORDINATE
        OBJECT                 = SOUTHBOUNDINGCOORDINATE
          NUM_VAL              = 1
          VALUE                = 20.0
        END_OBJECT             = SOUTHBOUNDINGCOORDINATE
      END_GROUP              = BOUNDINGRECTANGLE
    END_GROUP              = HORIZONTALSPATIALDOMAINCONTAINER
  END_GROUP              = SPATIALDOMAINCONTAINER

  GROUP                  = ADDITIONALATTRIBUTES
    OBJECT                 = ADDITIONALATTRIBUTESCONTAINER
      CLASS                = "1"
      OBJECT                 = ADDITIONALATTRIBUTENAME
        CLASS                = "1"
        NUM_VAL              = 1
        VALUE                = "DAYNIGHTFLAG"
      END_OBJECT             = ADDITIONALATTRIBUTENAME
      GROUP                  = INFORMATIONCONTENT
        CLASS                = "1"
        OBJECT                 = PARAMETERVALUE
          NUM_VAL              = 1
          CLASS                = "1"
          VALUE                = "Day"
        END_OBJECT             = PARAMETERVALUE
      END_GROUP              = INFORMATIONCONTENT
    END_OBJECT             = ADDITIONALATTRIBUTESCONTAINER
  END_GROUP              = ADDITIONALATTRIBUTES
END_GROUP              = INVENTORYMETADATA

END
"""


def area(provider):
    return settings.STAGING_ROOT / provider.name


def stage(provider, relative, data=None, size=1000, checksum_type="MD5", role="data"):
    """Write a file into the provider's staging area; its bulk file spec."""
    data = os.urandom(size) if data is None else data
    path = area(provider) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return {"name": path.name, "path": relative, "size": len(data),
            "checksum_type": checksum_type, "checksum": checksums.of_bytes(checksum_type, data),
            "role": role}


def granule(collection, granule_id, files, hour=0, bbox=(-10, -10, 10, 10), temporal=True):
    start = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(hours=hour)
    spec = {"collection": collection.key, "granule_id": granule_id, "files": files,
            "attributes": {"day_night": "Day"}}
    if temporal:
        spec["temporal"] = {"start": start.isoformat(),
                            "end": (start + timedelta(minutes=5)).isoformat()}
    if bbox:
        spec["bbox"] = list(bbox)
    return spec


def staged_granules(provider, collection, count, prefix="G", sizes=(1500,)):
    return [granule(collection, f"{prefix}{i:05d}",
                    [stage(provider, f"in/{prefix}{i:05d}.{n}.dat", size=s)
                     for n, s in enumerate(sizes)], hour=i)
            for i in range(count)]


def s4pa_pdr(groups, total=None, version="061"):
    """An S4PA-style PDR: unquoted values with blanks, DATA_VERSION with a leading zero,
    BEGINNING_DATE/TIME keys, OBJECT=FILE_GROUP without spaces. groups: [(data_type,
    [(directory, file_id, file_type, size, md5 or None)])]."""
    count = sum(len(files) for _, files in groups) if total is None else total
    lines = ["ORIGINATING_SYSTEM = S4PA;", f"TOTAL_FILE_COUNT = {count};",
             "EXPIRATION_TIME = 2099-01-10T12:00:00Z;"]
    for data_type, files in groups:
        lines += ["OBJECT=FILE_GROUP;", f"  DATA_TYPE = {data_type};",
                  f"  DATA_VERSION = {version};", "  NODE_NAME = s4pa.example.org;",
                  "  DESCRIPTOR = NOT USED;",
                  "  BEGINNING_DATE/TIME = 2024-01-01T00:05:00Z;",
                  "  ENDING_DATE/TIME = 2024-01-01T00:10:00Z;"]
        for directory, file_id, file_type, size, md5 in files:
            lines += ["  OBJECT = FILE_SPEC;", f"    DIRECTORY_ID = {directory};",
                      f"    FILE_ID = {file_id};", f"    FILE_TYPE = {file_type};",
                      f"    FILE_SIZE = {size};"]
            if md5:
                lines += ["    FILE_CKSUM_TYPE = MD5;", f"    FILE_CKSUM_VALUE = {md5};"]
            lines.append("  END_OBJECT = FILE_SPEC;")
        lines.append("END_OBJECT=FILE_GROUP;")
    return "\n".join(lines) + "\n"


def stage_pdr_group(provider, directory, granule_id, size=4000, with_met=True):
    """Stage a science file (and its .met) under `directory`; the PDR's file list for it."""
    data = os.urandom(size)
    science = f"{granule_id}.hdf"
    path = area(provider) / directory.strip("/") / science
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    files = [(directory, science, "SCIENCE", size, hashlib.md5(data).hexdigest())]
    if with_met:
        met = MET.format(granule_id=science).encode()
        (path.parent / f"{science}.met").write_bytes(met)
        files.append((directory, f"{science}.met", "METADATA", len(met),
                      hashlib.md5(met).hexdigest()))
    return files
