"""The house rules a reviewer would otherwise check by eye: module and function sizes, and pure
policy modules that load without Django (the layers themselves are `lint-imports`' contract)."""
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ("backend", "ingest", "distribution", "bench", "demo")
PURE = (
    "backend.errors", "backend.archive.scheduler", "backend.archive.simulator",
    "backend.archive.cache_policy", "backend.archive.tape", "backend.catalog.checksums",
    "backend.catalog.geo", "backend.catalog.stac", "backend.catalog.stac_search",
    "backend.metrics.rollup", "distribution.matching", "ingest.pdr", "ingest.names",
    "ingest.pvl_text",
)


def _modules():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def _long_functions(path, limit, root=ROOT):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > limit:
                yield f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)"


def test_the_scan_sees_the_whole_code_base():
    names = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert {"backend/archive/models.py", "ingest/models.py", "distribution/models.py",
            "bench/__init__.py", "demo/granules.py"} <= names


def test_no_module_is_over_500_lines():
    long = [f"{p.relative_to(ROOT)} ({n})" for p in _modules()
            if (n := len(p.read_text().splitlines())) > 500]
    assert long == []


def test_no_function_is_over_60_lines_outside_benchmarks():
    long = [f for p in _modules() if p.relative_to(ROOT).parts[0] != "bench"
            for f in _long_functions(p, 60)]
    assert long == []


def test_the_length_check_counts_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    (tmp_path / "m.py").write_text(f"def short():\n    pass\n\n\ndef long():\n{body}\n")
    found = list(_long_functions(tmp_path / "m.py", 60, root=tmp_path))
    assert found == ["m.py:5 long (61 lines)"]


@pytest.mark.parametrize("module", PURE)
def test_pure_policy_imports_without_django_settings(module):
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    code = (f"import sys, {module}\n"
            "loaded = [m for m in ('django.db', 'django.apps', 'rest_framework')\n"
            "          if m in sys.modules]\n"
            "assert not loaded, loaded\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
