// A real OpenID provider for the tests and browser journeys (the npm package oidc-provider, 8.x
// for Node 20): the authorization code flow with PKCE, RS256 ID tokens, and JWT access tokens
// for Granary's audience, with users that carry a groups claim.
//
//   node scripts/oidc-provider.mjs --port 8863 --key key.json --redirect http://.../callback/
//
// --key names a file holding the private RSA JWK to sign with (the tests make it, so they can
// sign hostile tokens with the same key). Any login name signs in with any password (the
// package's development pages); a name's groups come from --users (JSON: name -> groups), and
// names not listed have none. Prints "ready <issuer>" once it listens.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';

import Provider from 'oidc-provider';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    key: { type: 'string' },
    redirect: { type: 'string', multiple: true, default: [] },
    users: { type: 'string', default: '{}' },
    audience: { type: 'string', default: 'urn:granary' },
    secret: { type: 'string', default: 'granary-test-secret' },
    'access-ttl': { type: 'string', default: '3600' },
  },
});

const key = JSON.parse(readFileSync(args.key, 'utf8'));
const groupsOf = JSON.parse(args.users);
const AUDIENCE = args.audience;

const server = http.createServer();
server.listen(Number(args.port), '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'granary',
        client_secret: args.secret,
        redirect_uris: args.redirect,
        post_logout_redirect_uris: args.redirect.map((uri) => new URL('/', uri).href),
        grant_types: ['authorization_code', 'client_credentials'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'RS256',
      },
    ],
    jwks: { keys: [key] },
    pkce: { methods: ['S256'], required: () => true },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups'],
    },
    conformIdTokenClaims: false, // the ID token carries the groups, so one token tells all
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          // no "are you sure" page: the journey's sign-out goes straight through
          ctx.body = `<html><body>${form}<script>document.forms[0].submit()</script></body></html>`;
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'api',
          audience: AUDIENCE,
          accessTokenTTL: Number(args['access-ttl']),
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    // a first-party client: no consent page
    loadExistingGrant: async (ctx) => {
      const grantId =
        ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid email profile groups');
      grant.addResourceScope(AUDIENCE, 'api');
      await grant.save();
      return grant;
    },
    findAccount: async (ctx, sub) => ({
      accountId: sub,
      claims: async () => ({
        sub,
        email: `${sub}@idp.example`,
        email_verified: true,
        name: sub,
        preferred_username: sub,
        groups: groupsOf[sub] ?? [],
      }),
    }),
    extraTokenClaims: async (ctx, token) =>
      token.accountId ? { groups: groupsOf[token.accountId] ?? [] } : {},
    ttl: { AccessToken: Number(args['access-ttl']), IdToken: 3600 },
  });
  provider.proxy = false;
  server.on('request', provider.callback());
  process.stdout.write(`ready ${issuer}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
