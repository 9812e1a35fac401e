// Attacks on CORS with credentials: another site must never read a caller's answers with its credentials.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const SELECT = 'SELECT * WHERE { ?s ?p ?o } LIMIT 1';
const APP = 'https://app.example';

let withCredentials: TestGuard;
let byDefault: TestGuard;
before(async () => {
  withCredentials = await startTestGuard({
    cors: { origins: [APP], credentials: true },
    auth: { trustedHeaders: { agent: 'X-Remote-User', agentPrefix: 'https://idp.example/users/' } },
  });
  byDefault = await startTestGuard();
});
after(async () => {
  await Promise.all([withCredentials.close(), byDefault.close()]);
});

const query = (guard: TestGuard, headers: Record<string, string>) =>
  fetch(`${guard.endpoint}?query=${encodeURIComponent(SELECT)}`, { headers });

describe('CORS with credentials', () => {
  it('allows credentials for the listed origin, on answers, refusals and preflights', async () => {
    const answer = await query(withCredentials, { origin: APP, 'x-remote-user': 'alice' });
    await answer.arrayBuffer();
    assert.equal(answer.headers.get('access-control-allow-origin'), APP);
    assert.equal(answer.headers.get('access-control-allow-credentials'), 'true');
    const refusal = await query(withCredentials, { origin: APP, authorization: 'Bearer wrong' });
    assert.equal(refusal.status, 401);
    await refusal.arrayBuffer();
    assert.equal(refusal.headers.get('access-control-allow-credentials'), 'true');
    assert.match(refusal.headers.get('access-control-expose-headers') ?? '', /WWW-Authenticate/);
    const preflight = await fetch(withCredentials.endpoint, {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-remote-user, x-requested-with' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-credentials'), 'true');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /X-Requested-With.*x-remote-user/);
  });

  it('gives an unlisted origin, a look-alike origin and the null origin nothing', async () => {
    for (const origin of ['https://evil.example', 'https://app.example.evil.example', 'http://app.example', 'null', `${APP}:443`]) {
      const answer = await query(withCredentials, { origin, 'x-remote-user': 'alice' });
      await answer.arrayBuffer();
      assert.equal(answer.headers.get('access-control-allow-origin'), null, origin);
      assert.equal(answer.headers.get('access-control-allow-credentials'), null, origin);
      const preflight = await fetch(withCredentials.endpoint, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'GET' },
      });
      assert.equal(preflight.headers.get('access-control-allow-origin'), null, origin);
      assert.equal(preflight.headers.get('access-control-allow-credentials'), null, origin);
    }
  });

  it('by default echoes any origin but never allows credentials, and the preflight headers stay as before', async () => {
    const answer = await query(byDefault, { origin: 'https://evil.example' });
    await answer.arrayBuffer();
    assert.equal(answer.headers.get('access-control-allow-origin'), 'https://evil.example');
    assert.equal(answer.headers.get('access-control-allow-credentials'), null);
    const preflight = await fetch(byDefault.endpoint, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    assert.equal(preflight.headers.get('access-control-allow-credentials'), null);
    assert.equal(preflight.headers.get('access-control-allow-headers'), 'Authorization, Content-Type, Accept, X-API-Key');
  });
});
