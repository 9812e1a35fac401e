// Loads a library of the client tests' own package (test/clients/package.json), which the guard's own `npm ci` does not install.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Why the tests that drive a library of test/clients/package.json are skipped, or false when it is installed. */
export const CLIENT_PACKAGE_SKIP: string | false = existsSync(resolve('test/clients/node_modules/.package-lock.json'))
  ? false
  : "the client tests' package is not installed (npm ci --prefix test/clients)";

/**
 * The library `name` as installed in test/clients/node_modules, imported from that folder by
 * test/clients/import-from-package.mjs: the compiled test runs from dist/, whose folders hold no
 * node_modules.
 */
export async function importClientLibrary<T>(name: string): Promise<T> {
  const loader = (await import(pathToFileURL(resolve('test/clients/import-from-package.mjs')).href)) as {
    default: (name: string) => Promise<unknown>;
  };
  return (await loader.default(name)) as T;
}
