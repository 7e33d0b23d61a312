"""The archive tier (RAID cache, silos, drives, volumes); built out in the archive issue."""
