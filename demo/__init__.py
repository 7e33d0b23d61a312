"""Demo data: collections, providers, users and granules that `manage.py seed_demo` delivers.

Demo seeding drives the real ingest path, so it sits above every app and nothing imports it.
"""
