// Makes API keys and the SHA-256 digests that the configuration stores instead of them.

import { hash, randomBytes } from 'node:crypto';

/**
 * The lower-case hexadecimal SHA-256 of `key` (UTF-8), as stored in `auth.apiKeys[].sha256`.
 * A fast hash is right here: keys are long random tokens, not passwords (docs/design/auth.md#identity).
 */
export function hashApiKey(key: string): string {
  // The one-shot form: no Hash object per call (less than half of createHash's time).
  return hash('sha256', key, 'hex');
}

/** A new random API key: `sg_` and 32 random bytes in base64url (256 bits, header-safe). */
export function createApiKey(): string {
  return `sg_${randomBytes(32).toString('base64url')}`;
}
