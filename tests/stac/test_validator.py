"""stac-api-validator (the STAC community's conformance checker) against a live Granary.

The CLI runs in a subprocess through tests.stac.offline_validator, which only makes it read
its JSON Schemas from local files (this machine has no internet; see that module).
"""
import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from .builders import at, make_granule

REPO = Path(__file__).resolve().parents[2]
GEOMETRY = {"type": "Polygon", "coordinates": [
    [[20.2, 20.2], [20.8, 20.2], [20.8, 20.8], [20.2, 20.8], [20.2, 20.2]]]}


@pytest.fixture
def archive(transactional_db):
    from tests.factories import CollectionFactory

    modis = CollectionFactory(short_name="MOD021KM", version="061", title="MODIS L1B 1km",
                              description="Calibrated radiances, 1 km", platform="Terra")
    airs = CollectionFactory(short_name="AIRS2RET", version="7.0", title="AIRS L2 retrievals",
                             platform="Aqua", instrument="AIRS")
    for i in range(6):
        make_granule(modis, f"MOD021KM.A2024061.{i:04d}", at(1, i), box=(10, 10, 30, 30))
    make_granule(modis, "MOD021KM.A2024062.0000", at(2), box=(170, -10, -170, 10))
    for i in range(3):
        make_granule(airs, f"AIRS.2024.03.0{i + 1}", at(i + 1, 12), box=(15, 15, 25, 25))
    return modis


@pytest.mark.once
@pytest.mark.skipif(find_spec("stac_api_validator") is None,
                    reason="stac-api-validator is not installed (requirements-dev.txt)")
def test_stac_api_validator_passes(live_server, archive):
    command = [
        sys.executable, "-m", "tests.stac.offline_validator",
        "--root-url", f"{live_server.url}/stac/",
        "--conformance", "core", "--conformance", "collections",
        "--conformance", "features", "--conformance", "item-search",
        "--conformance", "item-search#sort", "--conformance", "features#sort",
        "--collection", archive.key, "--geometry", json.dumps(GEOMETRY),
        "--validate-pagination",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO)
    output = result.stdout + result.stderr
    print(output)
    assert result.returncode == 0, output
    assert "Errors: none" in output, output
