"""The subscriptions benchmark at a small size: its filters are ones the API accepts, and
the indexed matching finds exactly what testing every subscription in Python finds."""
from datetime import timedelta

import pytest

from backend.catalog.geo import parse_bbox
from bench import subscriptions, synthetic
from distribution.matching import check_conditions

KEYS = [f"{p.short_name}.1" for p in synthetic.PRODUCTS]


def test_filters_are_valid_and_varied():
    import random

    rng = random.Random(3)
    last = synthetic.EPOCH + timedelta(days=700)
    made = [subscriptions.make_filter(rng, KEYS, synthetic.EPOCH, last) for _ in range(400)]
    for keys, bbox, start, end, conditions in made:
        assert 1 <= len(keys) <= 3 and set(keys) <= set(KEYS)
        if bbox is not None:
            parse_bbox(list(bbox))
        assert start is None or end is None or start <= end
        assert check_conditions(conditions) == conditions
    assert any(b is None for _, b, _, _, _ in made) and any(
        b is not None and b[0] > b[2] for _, b, _, _, _ in made)
    assert any(s is None and e is not None for _, _, s, e, _ in made)
    assert any(s is not None and e is None for _, _, s, e, _ in made)
    assert any(c for *_, c in made) and any(not c for *_, c in made)


@pytest.mark.django_db
def test_a_small_run_agrees_with_the_brute_force_on_every_granule():
    result = subscriptions.run({"subscriptions": 500, "granules": 80, "check": 80, "users": 4,
                                "seed": 6})
    assert result["brute_force_checked"] == result["brute_force_agreed"] == 80
    assert result["granules"] == 80 and result["matches_total"] > 0
    assert result["match_ms_p50"] <= result["match_ms_p95"] <= result["match_ms_max"]
    assert [row[0] for row in result["table"]][0] == "subscriptions (varied filters)"
