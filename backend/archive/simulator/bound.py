"""The drive utilisation an offered load allows: a bound no schedule can beat.

Utilisation is transfer time over wall time, summed over the drives. The offered bytes need
their transfer time at the drive's rate, and cost at least this much more drive time:
- every cartridge that holds offered recalls is mounted at least once: the mean mount, the
  unmount, and the locate out to the farthest offered file and the rewind back (a recall whose
  copies lie on several cartridges is charged at its nearest copy; cartridges that share a
  recall are taken together, as one mount could serve them all);
- every volume group's writes fill at least ceil(bytes / capacity) cartridges, each mounted
  and unmounted once (their locates are left out).
If all of that fits in the drives' wall time, the load allows the utilisation its transfers
need; if not, the most any schedule can transfer is what a fractional knapsack takes, the
mounts that move most bytes per drive second first. Both are upper bounds: requests that
arrive too late to be served within the run count as served.
"""
from __future__ import annotations

from .workload import GB


def recall_mounts(recalls, hw):
    """The minimum mounts the recalls need, as (transfer_s, overhead_s) per mount.

    `recalls` lists each offered recall's copies (a tuple of scheduler Copies)."""
    parent = {}

    def root(label):
        parent.setdefault(label, label)
        while parent[label] != label:
            parent[label] = parent[parent[label]]
            label = parent[label]
        return label

    for copies in recalls:
        first = root(copies[0].volume)
        for c in copies[1:]:
            parent[root(c.volume)] = first
    sets = {}
    for copies in recalls:
        entry = sets.setdefault(root(copies[0].volume), [0, 0])
        entry[0] += copies[0].length
        entry[1] = max(entry[1], min(c.position for c in copies))
    fixed = sum(hw.mount_s) / 2 + hw.unmount_s
    return [(nbytes / hw.rate, fixed + 2 * hw.position_s_per_gb * far / GB)
            for nbytes, far in sets.values()]


def write_mounts(group_bytes, hw):
    """The minimum write mounts, as (transfer_s, overhead_s) per cartridge filled."""
    fixed = sum(hw.mount_s) / 2 + hw.unmount_s
    items = []
    for nbytes in group_bytes.values():
        full, rest = divmod(nbytes, hw.capacity)
        items += [(hw.capacity / hw.rate, fixed)] * int(full)
        if rest:
            items.append((rest / hw.rate, fixed))
    return items


def allowed_utilisation(recalls, group_bytes, hw, seconds):
    """The bound (see the module) and the parts it is made of, as a dict."""
    items = recall_mounts(recalls, hw) + write_mounts(group_bytes, hw)
    wall = hw.drives * seconds
    need = sum(t for t, _ in items)
    overhead = sum(o for _, o in items)
    room, moved = wall, 0.0
    for transfer, cost in sorted(items, key=lambda i: -i[0] / (i[0] + i[1])):
        share = min(1.0, room / (transfer + cost))
        moved += share * transfer
        room -= share * (transfer + cost)
        if room <= 0:
            break
    return {
        "allowed": round(moved / wall, 4),
        "needed": round(need / wall, 4),
        "min_overhead": round(overhead / wall, 4),
        "min_mounts": len(items),
        "fits": need + overhead <= wall,
    }
