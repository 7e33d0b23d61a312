"""present(paths): which cache files exist, by one listing of a busy folder or a look at each
file of a quiet one; held equal to os.path.exists on each path (the look it replaces)."""
import os
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from backend.archive.services.paths import LIST_FROM, present

names = st.from_regex(r"[0-9]{1,4}-[a-z]{1,3}\.dat", fullmatch=True)


@settings(max_examples=40, deadline=None)
@given(made=st.lists(names, max_size=LIST_FROM * 2, unique=True),
       asked=st.lists(names, max_size=LIST_FROM * 2, unique=True), folder_made=st.booleans())
def test_present_is_exists_on_each_path(made, asked, folder_made):
    """A busy folder (listed, or missing altogether) and a quiet one (looked at file by file)."""
    with tempfile.TemporaryDirectory() as root:
        busy, quiet = os.path.join(root, "000001"), os.path.join(root, "000002")
        os.mkdir(quiet)
        if folder_made:
            os.mkdir(busy)
            for name in made:
                open(os.path.join(busy, name), "wb").close()
        for name in made[:3]:
            open(os.path.join(quiet, name), "wb").close()
        paths = [f"{busy}/{n}" for n in asked + made[:LIST_FROM]] + [
            f"{quiet}/{n}" for n in asked[:5] + made[:2]]
        assert present(paths) == {p for p in paths if os.path.exists(p)}
