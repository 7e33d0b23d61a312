"""Settings for the embedded default (SQLite, a file-system broker, demo data).

Everything a deployment changes comes from the environment; see deploy/README.md.
"""
from .above_archive import *  # noqa: F401,F403
from .base import *  # noqa: F401,F403
