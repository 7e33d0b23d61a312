"""A real OpenID provider for the tests: scripts/oidc-provider.mjs (the npm package
oidc-provider) on 127.0.0.1, started with a key the test made, so hostile tokens can be signed
with the provider's own key, and stopped by its PID. Also: a browser's sign-in there, by
plain HTTP."""
import json
import os
import re
import signal
import subprocess
from pathlib import Path
from urllib.parse import urljoin

import requests
from joserfc.jwk import RSAKey

ROOT = Path(__file__).resolve().parent.parent
SECRET = "granary-test-secret"
AUDIENCE = "urn:granary"
USERS = {"olga": ["granary-operators"], "pat": ["granary-providers", "staff"],
         "alice": ["granary-users"]}


class OidcProvider:
    def __init__(self, folder, redirects, port=None):
        self.folder = Path(folder)
        self.redirects = list(redirects)
        self.port = int(port if port is not None else os.environ.get("GRANARY_TEST_OIDC_PORT",
                                                                     "0"))
        self.key = RSAKey.generate_key(2048, parameters={"kid": "test-key", "alg": "RS256",
                                                         "use": "sig"}, private=True)
        self.process = None
        self.issuer = None

    @property
    def pid(self):
        return self.process.pid if self.process else None

    def start(self):
        key_file = self.folder / "provider-key.json"
        key_file.write_text(json.dumps(self.key.as_dict(private=True)))
        command = ["node", str(ROOT / "scripts" / "oidc-provider.mjs"), "--port", str(self.port),
                   "--key", str(key_file), "--users", json.dumps(USERS),
                   "--audience", AUDIENCE, "--secret", SECRET]
        for uri in self.redirects:
            command += ["--redirect", uri]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                        stderr=open(self.folder / "provider.log", "wb"),
                                        text=True)
        line = self.process.stdout.readline()
        if not line.startswith("ready "):
            self.close()
            raise RuntimeError("the OpenID provider did not start: "
                               + (self.folder / "provider.log").read_text()[-2000:])
        self.issuer = line.split()[1]

    def close(self):
        if self.process is not None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
            self.process = None

    def settings(self, **extra):
        """GRANARY_OIDC for this provider."""
        return {"issuer": self.issuer, "client_id": "granary", "client_secret": SECRET,
                "audience": AUDIENCE, "name": "Test IdP", "scopes": "openid email profile groups",
                "groups_claim": "groups", "role_rules": "", "leeway_s": 30, "keys_ttl_s": 3600,
                **extra}


def sign_in_at_provider(authorize_url, login, session=None):
    """Sign in as `login` on the provider's pages, starting at the authorization URL Granary
    sent the browser to; the URL the provider sends the browser back to (code and state)."""
    browser = session or requests.Session()
    answer = browser.get(authorize_url, allow_redirects=False)
    while answer.status_code in (302, 303) and "/interaction/" in answer.headers["location"]:
        page = browser.get(urljoin(authorize_url, answer.headers["location"]))
        form = re.search(r'action="([^"]+)"', page.text).group(1)
        answer = browser.post(urljoin(authorize_url, form),
                              data={"prompt": "login", "login": login, "password": "any"},
                              allow_redirects=False)
        answer = browser.get(urljoin(authorize_url, answer.headers["location"]),
                             allow_redirects=False)
    assert answer.status_code in (302, 303), answer.text[:500]
    return answer.headers["location"]


def provider_access_token(provider, login):
    """A JWT access token the provider issues for Granary to `login`, by the code flow with
    PKCE (Authlib's requests client plays the script's part)."""
    from authlib.common.security import generate_token
    from authlib.integrations.requests_client import OAuth2Session

    client = OAuth2Session("granary", SECRET, scope="openid groups",
                           redirect_uri=provider.redirects[0], code_challenge_method="S256")
    verifier = generate_token(48)
    url, _ = client.create_authorization_url(provider.issuer + "/auth", code_verifier=verifier,
                                             nonce=generate_token(16))
    back = sign_in_at_provider(url, login)
    token = client.fetch_token(provider.issuer + "/token", authorization_response=back,
                               code_verifier=verifier)
    return token["access_token"]
