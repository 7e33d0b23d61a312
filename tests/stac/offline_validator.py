"""Run the stac-api-validator CLI with its JSON Schemas read from local files.

Usage: python -m tests.stac.offline_validator <stac-api-validator arguments>

Why: stac-api-validator 0.6.8 checks every Collection and Item with stac-validator (the
`stac_validator` package, here from stac-valid 4.2.2), which downloads the STAC schemas from
schemas.stacspec.org and extension schemas from stac-extensions.github.io. This machine and
CI have no internet. stac_validator looks for copies in stac_validator/local_schemas/, but no
published wheel ships that folder, and the CLI has no flag for a schema map (--stac-check-config
only tunes the linter). So before the CLI starts, schema URLs are mapped to files:

- STAC 1.1.0 core and GeoJSON schemas: the copies bundled with pystac
  (pystac/validation/jsonschemas), which pystac's own validator also uses;
- the JSON Schema draft-07 meta-schema: bundled with jsonschema-specifications;
- the File extension v2.1.0: tests/stac/schemas/file-v2.1.0.json, a stand-in written from the
  extension's documented field rules.

Every other URL (the STAC API under test, asset links) is fetched as usual.
"""
import sys
from importlib.resources import files
from pathlib import Path

STACSPEC = "https://schemas.stacspec.org/v1.1.0"
ITEM_PARTS = ("item", "bands", "basics", "common", "data-values", "datetime", "instrument",
              "licensing", "provider")


def schema_files():
    """{schema URL: local path} for every schema a Granary STAC document refers to."""
    bundled = files("pystac.validation") / "jsonschemas"
    spec = bundled / "stac-spec" / "v1.1.0"
    mapping = {f"{STACSPEC}/item-spec/json-schema/{name}.json": spec / f"{name}.json"
               for name in ITEM_PARTS}
    mapping[f"{STACSPEC}/collection-spec/json-schema/collection.json"] = spec / "collection.json"
    mapping[f"{STACSPEC}/catalog-spec/json-schema/catalog.json"] = spec / "catalog.json"
    for name in ("Feature", "Geometry"):
        mapping[f"https://geojson.org/schema/{name}.json"] = bundled / "geojson" / f"{name}.json"
    draft7 = files("jsonschema_specifications") / "schemas" / "draft7" / "metaschema.json"
    mapping["http://json-schema.org/draft-07/schema"] = draft7
    mapping["http://json-schema.org/draft-07/schema#"] = draft7
    mapping["https://stac-extensions.github.io/file/v2.1.0/schema.json"] = (
        Path(__file__).parent / "schemas" / "file-v2.1.0.json")
    return {url: str(path) for url, path in mapping.items()}


def serve_schemas_locally():
    from stac_validator import utilities

    local = schema_files()
    fetch = utilities.fetch_and_parse_file

    def fetch_local_first(input_path, headers=None):
        path = local.get(input_path) or local.get(input_path.rstrip("#"))
        if path is not None:
            return fetch(path)
        return fetch(input_path, headers)

    utilities.fetch_and_parse_file = fetch_local_first


def main():
    serve_schemas_locally()
    from stac_api_validator.__main__ import main as validator

    validator(args=sys.argv[1:], prog_name="stac-api-validator")


if __name__ == "__main__":
    main()
