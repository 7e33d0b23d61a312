"""The ECS inventory metadata (ODL `.met`) that MODAPS delivers beside each MODIS granule:
local granule id, day or night, time range and bounding rectangle, as ingest's .met reader
(ingest/metadata.py) and ECS tools read it."""


def inventory_metadata(local_id, start, end, box, day_night):
    """The ECS inventory metadata (ODL) MODAPS delivers beside each granule."""
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
        "    END_GROUP              = HORIZONTALSPATIALDOMAINCONTAINER\n"
        "  END_GROUP              = SPATIALDOMAINCONTAINER\n\n"
        "END_GROUP              = INVENTORYMETADATA\n\nEND\n")
