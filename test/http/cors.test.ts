// Unit tests of the CORS headers: default, origin list, credentials only with a list.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCorsHeaders } from '../../src/http/cors.js';

describe('createCorsHeaders', () => {
  it('by default echoes any origin, without credentials, and exposes WWW-Authenticate, the error code and the partial answer header', () => {
    const cors = createCorsHeaders({ origins: undefined, credentials: false, trustedHeaders: ['x-remote-user'] });
    assert.deepEqual(cors.response('https://any.example'), {
      'access-control-allow-origin': 'https://any.example',
      'access-control-expose-headers': 'WWW-Authenticate, sparql-guard-error, sparql-guard-partial',
    });
    assert.equal(cors.preflight('https://any.example')['access-control-allow-headers'], 'Authorization, Content-Type, Accept, X-API-Key');
    assert.deepEqual(cors.response(undefined), {});
  });

  it('with credentials and a list: Allow-Credentials for listed origins only, trusted headers in preflight', () => {
    const cors = createCorsHeaders({ origins: ['https://app.example'], credentials: true, trustedHeaders: ['x-remote-user'] });
    assert.equal(cors.response('https://app.example')['access-control-allow-credentials'], 'true');
    assert.equal(cors.preflight('https://app.example')['access-control-allow-credentials'], 'true');
    assert.equal(
      cors.preflight('https://app.example')['access-control-allow-headers'],
      'Authorization, Content-Type, Accept, X-API-Key, X-Requested-With, x-remote-user',
    );
    assert.deepEqual(cors.response('https://evil.example'), {});
    assert.deepEqual(cors.preflight('https://evil.example'), {});
    assert.deepEqual(cors.response('null'), {});
  });

  it('never sends credentials for any origin, even if asked to', () => {
    const cors = createCorsHeaders({ origins: undefined, credentials: true, trustedHeaders: [] });
    assert.equal(cors.response('https://evil.example')['access-control-allow-credentials'], undefined);
    assert.equal(cors.preflight('https://evil.example')['access-control-allow-credentials'], undefined);
  });
});
