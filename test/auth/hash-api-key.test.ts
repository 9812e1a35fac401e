// Proves the key digest matches the standard SHA-256 and that new keys are random and header-safe.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApiKey, hashApiKey } from '../../src/auth/hash-api-key.js';

describe('hashApiKey', () => {
  it('gives the lower-case hex SHA-256 of the UTF-8 key (FIPS 180-4 test vectors)', () => {
    assert.equal(hashApiKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(hashApiKey(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('createApiKey', () => {
  it('makes sg_ and 43 base64url characters (32 bytes), different each time', () => {
    const keys = new Set(Array.from({ length: 100 }, () => createApiKey()));
    assert.equal(keys.size, 100);
    for (const key of keys) assert.match(key, /^sg_[A-Za-z0-9_-]{43}$/);
  });

  it('makes keys whose digest the configuration accepts', () => {
    assert.match(hashApiKey(createApiKey()), /^[0-9a-f]{64}$/);
  });
});
