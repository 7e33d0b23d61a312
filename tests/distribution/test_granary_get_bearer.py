"""granary-get with the OpenID provider's access token instead of a personal one: a live
gunicorn pointed at the real test provider checks the JWT against its published keys."""
import os

import pytest
from rest_framework.test import APIClient

from backend.accounts.models import ExternalIdentity
from tests.oidc_provider import AUDIENCE, SECRET, provider_access_token

from .live_web import CLIENT, gunicorn, run_client
from .test_granary_get import _manifest, _md5, _order, _target

pytestmark = pytest.mark.django_db(transaction=True)


def test_granary_get_reads_an_order_with_the_providers_bearer_token(
        oidc, collection, archived, inline, data_root, tmp_path):
    token = provider_access_token(oidc, "alice")
    first = APIClient()
    first.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert first.get("/api/v1/me/").json()["username"] == "alice"  # made on first sight
    [granule] = archived(collection, 1)
    owner = APIClient()
    owner.force_authenticate(ExternalIdentity.objects.get(subject="alice").user)
    order_id = _order(owner, inline, [granule])
    out = tmp_path / "downloads"
    with gunicorn(data_root, GRANARY_OIDC_ISSUER=oidc.issuer, GRANARY_OIDC_CLIENT_ID="granary",
                  GRANARY_OIDC_CLIENT_SECRET=SECRET, GRANARY_OIDC_AUDIENCE=AUDIENCE) as web:
        done = run_client([str(CLIENT), str(order_id), "--server", web.url, "-o", str(out)],
                          env=dict(os.environ, GRANARY_TOKEN=token))
        refused = run_client([str(CLIENT), str(order_id), "--server", web.url, "-o",
                              str(tmp_path / "other")],
                             env=dict(os.environ, GRANARY_TOKEN=token[:-4] + "AAAA"))
    assert done.returncode == 0, done.stderr
    _, rows = _manifest(out)
    for file in granule.files.all():
        assert rows[file.name]["outcome"] == "ok"
        assert _md5(_target(out, file)) == file.checksum
    assert refused.returncode != 0 and "401" in refused.stderr
