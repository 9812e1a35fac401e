// The query page: YASGUI and its assets, served by the guard itself from the installed package (no CDN).

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { packageRoot } from '../package-root.js';

/**
 * The page's Content Security Policy: scripts, styles, fonts and images from the guard only,
 * requests to the guard only, no frames, no forms posted elsewhere, no plugins. YASGUI and
 * CodeMirror set element styles from script (allowed: CSSOM is not governed by style-src),
 * and its bundled CSS inlines icons as data: URLs. The one `<style>` element YASGUI writes (the
 * table column resizer's fixed rules) is allowed by its hash, not by 'unsafe-inline'; the
 * browser test fails if another YASGUI version writes another.
 */
export const QUERY_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'sha256-zCK2EVMoPc04mRF/g5CotUvxbJPWS+8V0b+s9ptqQIk='",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Files of the page: URL name -> where it comes from and its media type. */
const ASSETS: Readonly<Record<string, { readonly file: () => string; readonly type: string }>> = {
  'yasgui.min.js': { file: () => yasguiFile('yasgui.min.js'), type: 'text/javascript; charset=utf-8' },
  'yasgui.min.css': { file: () => yasguiFile('yasgui.min.css'), type: 'text/css; charset=utf-8' },
  'page.js': { file: () => join(uiFolder(), 'page.js'), type: 'text/javascript; charset=utf-8' },
  'page.css': { file: () => join(uiFolder(), 'page.css'), type: 'text/css; charset=utf-8' },
};
/** The assets do not depend on the caller; an hour in the browser's cache is enough. */
const ASSET_CACHE_CONTROL = 'public, max-age=3600';

/**
 * Registers the page's assets under `{path}/ui/` and returns the function that answers a
 * browser's GET {path} with the page. Everything is read once, here (a missing file is a
 * start-up error, not a 500 later).
 */
export function serveQueryPage(app: FastifyInstance, path: string): (reply: FastifyReply) => FastifyReply {
  const assetsPath = `${path}/ui`;
  const html = readFileSync(join(uiFolder(), 'index.html'), 'utf8')
    .replaceAll('{{ASSETS}}', escapeHtml(assetsPath))
    .replaceAll('{{ENDPOINT}}', escapeHtml(path));
  for (const [name, asset] of Object.entries(ASSETS)) {
    const body = readFileSync(asset.file());
    app.get(`${assetsPath}/${name}`, async (_request, reply) =>
      reply
        .header('content-type', asset.type)
        .header('cache-control', ASSET_CACHE_CONTROL)
        .header('x-content-type-options', 'nosniff')
        .send(body),
    );
  }
  return (reply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', QUERY_PAGE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(html);
}

/** A file of the @zazuko/yasgui package's build folder, as installed. */
function yasguiFile(name: string): string {
  const main = createRequire(import.meta.url).resolve('@zazuko/yasgui');
  return join(dirname(main), name);
}

/** The ui/ folder at the package root. */
function uiFolder(): string {
  const folder = join(packageRoot(), 'ui');
  if (!existsSync(join(folder, 'index.html'))) throw new Error('cannot find the ui/ folder of sparql-guard at its package root');
  return folder;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
