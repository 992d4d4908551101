// An OpenID Provider for the integration tests (tests/integration/oidc.rs), on the certified
// oidc-provider package: code flow with PKCE, its development login and consent pages, one client.
//
// Environment:
//   CLIENT_ID, CLIENT_SECRET, REDIRECT_URI  the admin's registration
//   ACCOUNTS_FILE  JSON {"login": ["group", ...], ...}, read at every sign-in so a test can change
//                  a user's groups between two logins; any other login signs in with no group
// Listens on 127.0.0.1 on a free port and prints `listening http://127.0.0.1:PORT` once ready.

import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const env = (name) => {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return value;
};

const groupsOf = (login) => {
  const accounts = JSON.parse(readFileSync(env('ACCOUNTS_FILE'), 'utf8'));
  return accounts[login] ?? [];
};

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: env('CLIENT_ID'),
      client_secret: env('CLIENT_SECRET'),
      redirect_uris: [env('REDIRECT_URI')],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }],
    // The default (conformIdTokenClaims): the ID token carries `sub` only and the user name and groups
    // come from the userinfo endpoint, the admin's harder case; the provider written in the tests puts
    // them in the ID token, as Keycloak does.
    claims: { openid: ['sub'], profile: ['preferred_username', 'name'], groups: ['groups'] },
    scopes: ['openid', 'profile', 'groups'],
    findAccount: async (_ctx, id) => ({
      accountId: id,
      claims: async () => ({ sub: id, preferred_username: id, name: id, groups: groupsOf(id) }),
    }),
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['test-only-cookie-key'] },
  });
  // Quiet: the tests read only the line below.
  provider.on('server_error', (_ctx, error) => console.error(error));
  server.on('request', provider.callback());
  console.log(`listening ${issuer}`);
});
