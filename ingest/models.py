"""Ingest requests, PDRs and staging; built out in the ingest issue."""
