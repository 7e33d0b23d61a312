"""The embedded default's secret key: made at random on first run, kept in the data root, the
same for every later process of that install and different from any other install's."""
import os
import stat
import subprocess
import sys
from pathlib import Path

from backend.settings.secret import secret_key

ROOT = Path(__file__).resolve().parents[2]


def _key_of_a_fresh_process(data_root):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DJANGO_SECRET_KEY", "DJANGO_SETTINGS_MODULE")}
    env["GRANARY_DATA_ROOT"] = str(data_root)
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c",
         "from django.conf import settings; print(settings.SECRET_KEY)"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_each_install_makes_its_own_key_once_and_keeps_it(tmp_path):
    first = _key_of_a_fresh_process(tmp_path / "one")
    kept = tmp_path / "one" / "secret-key"
    assert kept.read_text().strip() == first and len(first) >= 50
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert _key_of_a_fresh_process(tmp_path / "one") == first
    assert _key_of_a_fresh_process(tmp_path / "two") != first


def test_a_key_from_the_environment_wins_and_nothing_is_written(tmp_path):
    given = "k" * 20 + "-from-the-environment-" + "z" * 20
    assert secret_key(tmp_path, given) == given
    assert not (tmp_path / "secret-key").exists()


def test_concurrent_first_runs_agree_on_one_key(tmp_path):
    keys = {secret_key(tmp_path) for _ in range(3)}
    assert len(keys) == 1 and sorted(p.name for p in tmp_path.iterdir()) == ["secret-key"]
