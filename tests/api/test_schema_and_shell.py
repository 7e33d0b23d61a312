"""The OpenAPI schema validates, the docs page renders offline, the web app is served at /."""
import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_openapi_schema_is_valid(tmp_path):
    out = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    assert text.startswith("openapi: 3.")
    assert "/api/v1/granules/" in text and "/api/v1/collections/{key}/" in text


def test_docs_page_uses_bundled_swagger_ui(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "/api/schema/" in html


def test_schema_endpoint(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")


def test_web_app_served_for_client_routes(client, settings, tmp_path):
    (tmp_path / "index.html").write_text("<!doctype html><div id=root></div>")
    settings.FRONTEND_DIST = tmp_path
    for path in ("/", "/collections/MOD021KM.061"):
        response = client.get(path)
        assert response.status_code == 200
        assert b'<div id=root>' in response.content
    assert "csrftoken" in response.cookies


def test_missing_build_explains_itself(client, settings, tmp_path):
    settings.FRONTEND_DIST = tmp_path / "absent"
    response = client.get("/")
    assert response.status_code == 503
    assert b"npm run build" in response.content


def test_unknown_api_path_is_404_not_the_app(client):
    assert client.get("/api/v1/nothing-here/").status_code == 404
