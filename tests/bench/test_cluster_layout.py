"""The cluster's process layout (bench/cluster/hosts.py) against what the rest of Granary
expects: every Celery queue served, exactly one beat, and each silo's storage manager consuming
the very queue the storage manager's tick sends that silo's drives to."""
from pathlib import Path

from backend.archive.services.manager import drive_queue
from backend.celery import QUEUES
from bench.cluster.hosts import SILOS, commands
from bench.cluster.network import ADDRESSES, Network


def _queues(argv):
    return argv[argv.index("-Q") + 1].split(",") if "-Q" in argv else []


def test_every_queue_has_one_host_and_there_is_one_beat():
    layout = commands(Path("/data"))
    served = [q for procs in layout.values() for _, argv in procs for q in _queues(argv)]
    assert sorted(q for q in served if q in QUEUES) == sorted(QUEUES)
    beats = [host for host, procs in layout.items() for _, argv in procs if "beat" in argv]
    assert beats == ["default"]


def test_each_silos_storage_manager_consumes_its_drives_queue(settings):
    settings.GRANARY_ARCHIVE_QUEUE_PER_SILO = True
    layout = commands(Path("/data"))
    for silo in SILOS:
        [(_, argv)] = layout[f"sm-{silo}"]
        assert _queues(argv) == [drive_queue(silo)]
    settings.GRANARY_ARCHIVE_QUEUE_PER_SILO = False
    assert drive_queue(SILOS[0]) is None


def test_hosts_have_distinct_addresses_in_the_subnet_and_short_interface_names():
    network = Network(77)
    addresses = [network.address(h) for h in ADDRESSES]
    assert len(set(addresses)) == len(addresses)
    assert network.gateway not in addresses
    assert all(a.startswith("10.77.0.") for a in addresses)
    # Linux interface names are at most 15 characters
    assert len(network.bridge) <= 15 and len(f"{network.prefix}v{len(ADDRESSES)}") <= 15
