"""The ECS inventory metadata (ODL `.met`) that MODAPS delivers beside each MODIS granule:
local granule id, day or night, time range and bounding rectangle, as ingest's .met reader
(ingest/metadata.py) and ECS tools read it."""


def inventory_metadata(local_id, start, end, box, day_night, gring=None):
    """The ECS inventory metadata (ODL) MODAPS delivers beside each granule; `gring` the
    swath's outline as [(lon, lat), ...] (a G-ring), None for the bounding rectangle only."""
    def obj(name, value, indent):
        pad = " " * indent
        return (f"{pad}OBJECT                 = {name}\n{pad}  NUM_VAL              = 1\n"
                f"{pad}  VALUE                = {value}\n{pad}END_OBJECT             = {name}\n")

    west, south, east, north = box
    return (
        "GROUP                  = INVENTORYMETADATA\n  GROUPTYPE            = MASTERGROUP\n\n"
        "  GROUP                  = ECSDATAGRANULE\n"
        + obj("LOCALGRANULEID", f'"{local_id}"', 4) + obj("DAYNIGHTFLAG", f'"{day_night}"', 4)
        + "  END_GROUP              = ECSDATAGRANULE\n\n  GROUP                  = RANGEDATETIME\n"
        + obj("RANGEBEGINNINGDATE", f'"{start:%Y-%m-%d}"', 4)
        + obj("RANGEBEGINNINGTIME", f'"{start:%H:%M:%S}.000000"', 4)
        + obj("RANGEENDINGDATE", f'"{end:%Y-%m-%d}"', 4)
        + obj("RANGEENDINGTIME", f'"{end:%H:%M:%S}.000000"', 4)
        + "  END_GROUP              = RANGEDATETIME\n\n"
        "  GROUP                  = SPATIALDOMAINCONTAINER\n"
        "    GROUP                  = HORIZONTALSPATIALDOMAINCONTAINER\n"
        "      GROUP                  = BOUNDINGRECTANGLE\n"
        + obj("WESTBOUNDINGCOORDINATE", f"{west:.4f}", 8)
        + obj("NORTHBOUNDINGCOORDINATE", f"{north:.4f}", 8)
        + obj("EASTBOUNDINGCOORDINATE", f"{east:.4f}", 8)
        + obj("SOUTHBOUNDINGCOORDINATE", f"{south:.4f}", 8)
        + "      END_GROUP              = BOUNDINGRECTANGLE\n"
        + _gpolygon(gring)
        + "    END_GROUP              = HORIZONTALSPATIALDOMAINCONTAINER\n"
        "  END_GROUP              = SPATIALDOMAINCONTAINER\n\n"
        "END_GROUP              = INVENTORYMETADATA\n\nEND\n")


def _gpolygon(gring):
    """The G-ring group ECS writes for a swath (its outline, points in order)."""
    if not gring:
        return ""
    pad = " " * 6

    def values(name, numbers):
        listed = ", ".join(f"{n:.4f}" for n in numbers)
        return (f"{pad}  OBJECT                 = {name}\n{pad}    NUM_VAL              = "
                f"{len(numbers)}\n{pad}    VALUE                = ({listed})\n"
                f"{pad}  END_OBJECT             = {name}\n")

    return (f"{pad}GROUP                  = GPOLYGON\n"
            + values("GRINGPOINTLONGITUDE", [lon for lon, _ in gring])
            + values("GRINGPOINTLATITUDE", [lat for _, lat in gring])
            + f"{pad}  OBJECT                 = EXCLUSIONGRINGFLAG\n{pad}    NUM_VAL"
              f"              = 1\n{pad}    VALUE                = \"N\"\n"
              f"{pad}  END_OBJECT             = EXCLUSIONGRINGFLAG\n"
            + f"{pad}END_GROUP              = GPOLYGON\n")
