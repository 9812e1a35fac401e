// The Cache-Control of every answer: private and no-store, plus the store's directives only where they restrict further.

/**
 * Directives of the store that only ever restrict caching (RFC 9111 section 5.2.2); the
 * guard adds them to its own. Every other directive (`public`, `max-age`, `s-maxage`,
 * `stale-while-revalidate`, `immutable`, extensions) would loosen `private, no-store`
 * or mean nothing beside it, so it is dropped.
 */
const RESTRICTING = new Set(['no-cache', 'must-revalidate', 'proxy-revalidate', 'no-transform', 'must-understand']);

/** What the guard sends when the store says nothing. */
export const PRIVATE_NO_STORE = 'private, no-store';

/**
 * The Cache-Control of an answer, given the store's (or undefined). Answers differ per caller,
 * so a shared cache must never keep one (`private`), nor any cache (`no-store`); the store
 * can make that stricter, never looser.
 */
export function composeCacheControl(storeValue: string | undefined): string {
  if (storeValue === undefined) return PRIVATE_NO_STORE;
  const extra: string[] = [];
  for (const part of storeValue.split(',')) {
    // A directive with an argument (`no-cache="Set-Cookie"`) keeps only its name: the
    // field-name form restricts less than the bare directive (RFC 9111 section 5.2.2.4).
    const name = part.split('=')[0]!.trim().toLowerCase();
    if (RESTRICTING.has(name) && !extra.includes(name)) extra.push(name);
  }
  return extra.length === 0 ? PRIVATE_NO_STORE : `${PRIVATE_NO_STORE}, ${extra.join(', ')}`;
}
