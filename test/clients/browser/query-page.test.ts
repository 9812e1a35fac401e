// The query page and cross-origin calls in a real browser: Debian's Chromium driven by playwright-core, one launch.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type * as Playwright from 'playwright-core';
import type { BrowserContext, Page, Request } from 'playwright-core';
import { startTestGuard, type TestGuard } from '../../helpers/start-test-guard.js';
import { CLIENT_PACKAGE_SKIP, importClientLibrary } from '../import-client-library.js';

// The functions given to page.evaluate run in the browser, whose globals the Node types lack.
declare const window: unknown, document: { querySelector(selector: string): { textContent: string | null } | null };
declare const sessionStorage: Storage, localStorage: Storage;
interface Storage {
  readonly length: number;
  getItem(key: string): string | null;
}

/** Debian's package (`apt-get install chromium`); the tests never download a browser. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = resolve('test-output/screenshots');
const DEMO = JSON.parse(readFileSync('policies/demo.json', 'utf8')) as { auth: unknown };
const ALICE_KEY = 'sg_demo_alice_hr_7c1e5a93f04b2d68';
const ALICE = 'https://example.org/agents/alice';

let app: Server;
let appPort: number;
let withCredentials: TestGuard;
let byDefault: TestGuard;
let chromium: typeof Playwright.chromium;
let context: BrowserContext;
let profile: string;
/** Requests the browser tried to send anywhere but the loopback servers of this test. */
const external: string[] = [];
/** Console errors and CSP violations of every page. */
const problems: string[] = [];

/** The demo (policies, keys, data) as `npm start` serves it, with extra settings. */
const demoGuard = (extra: Record<string, unknown>) =>
  startTestGuard({
    policies: [resolve('policies/demo.ttl')],
    auth: DEMO.auth,
    embedded: { data: [resolve('policies/demo.trig')] },
    ...extra,
  });

function watch(page: Page): void {
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
}

async function openPage(guard: TestGuard): Promise<Page> {
  const page = await context.newPage();
  await page.goto(guard.endpoint);
  return page;
}

async function runQuery(page: Page, query: string): Promise<void> {
  await page.evaluate((text) => {
    const yasgui = (window as unknown as { yasgui: { getTab(): { getYasqe(): { setValue(v: string): void; query(): Promise<unknown> } } } })
      .yasgui;
    yasgui.getTab().getYasqe().setValue(text);
  }, query);
  await page.click('.yasqe_queryButton');
}

/** Why the browser cannot run here, as the other client tests say it: the clients' package or the browser is absent (.ci/run installs both). */
const BROWSER_SKIP =
  CLIENT_PACKAGE_SKIP || (existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);

describe('query page in Chromium', { skip: BROWSER_SKIP }, () => {
  before(async () => {
    chromium = (await importClientLibrary<typeof Playwright>('playwright-core')).chromium;
    // A page of another origin (another port), for the cross-origin calls.
    app = createServer((_request, response) => {
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end('<!doctype html><title>another app</title><p>another origin</p>');
    });
    await new Promise<void>((done) => app.listen(0, '127.0.0.1', done));
    appPort = (app.address() as AddressInfo).port;
    [withCredentials, byDefault] = await Promise.all([
      demoGuard({ cors: { origins: [`http://127.0.0.1:${appPort}`], credentials: true } }),
      demoGuard({}),
    ]);
    profile = mkdtempSync(join(tmpdir(), 'sparql-guard-chromium-'));
    mkdirSync(SCREENSHOTS, { recursive: true });
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1280, height: 900 },
    });
    // Offline: anything but the loopback servers is refused and recorded.
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1' || url.hostname === 'localhost') return route.continue();
      external.push(url.href);
      return route.abort();
    });
    context.on('page', (page) => watch(page));
  });

  after(async () => {
    await context?.close();
    await Promise.all([withCredentials?.close(), byDefault?.close()]);
    await new Promise<void>((done) => (app ? app.close(() => done()) : done()));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('loads from the guard alone, shows what the caller may see, runs a query with the demo key, shows refusals', async () => {
    const page = await openPage(withCredentials);
    assert.match(await page.title(), /sparql-guard/);
    // Anonymous: the public graph only.
    await page.waitForSelector('#access-facts:not([hidden])');
    assert.equal(await page.textContent('#agent'), 'https://w3id.org/sparql-guard#Anonymous');
    assert.deepEqual(await page.$$eval('#graphs li', (items) => items.map((item) => item.textContent)), [
      'https://example.org/graphs/public',
    ]);

    // The demo key: alice, group hr, her three graphs.
    await page.fill('#key', ALICE_KEY);
    await page.click('#credentials button[type=submit]');
    await page.waitForFunction((agent) => document.querySelector('#agent')?.textContent === agent, ALICE);
    assert.equal(await page.textContent('#groups'), 'hr');
    assert.deepEqual(await page.$$eval('#graphs li', (items) => items.map((item) => item.textContent)), [
      'https://example.org/graphs/hr',
      'https://example.org/graphs/people',
      'https://example.org/graphs/projectsa row rule decides which records you read',
      'https://example.org/graphs/public',
    ]);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('sparql-guard-key')), ALICE_KEY);
    assert.equal(
      await page.evaluate(() => localStorage.length === 0 || !JSON.stringify(localStorage).includes('sg_demo_alice')),
      true,
      'the key never goes to local storage',
    );

    await runQuery(page, 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g');
    await page.waitForSelector('.yasr table tbody tr >> text=graphs/hr', { timeout: 30_000 });
    const cells = await page.$$eval('.yasr table tbody tr', (rows) => rows.map((row) => row.textContent ?? ''));
    assert.equal(cells.length, 3, cells.join(' | '));
    assert.doesNotMatch(
      await page.evaluate(() => JSON.stringify(localStorage)),
      /graphs\/hr/,
      "alice's answer is not kept in local storage",
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'query-page-rows.png'), fullPage: true });

    await runQuery(page, 'INSERT DATA { <urn:a> <urn:b> <urn:c> }');
    await page.waitForSelector('.yasr >> text=updates are not allowed', { timeout: 30_000 });
    await page.screenshot({ path: join(SCREENSHOTS, 'query-page-refusal.png'), fullPage: true });

    // A wrong key: the page says why, in the guard's words.
    await page.fill('#key', 'not-a-key');
    await page.click('#credentials button[type=submit]');
    await page.waitForSelector('#access-status.refused');
    assert.match((await page.textContent('#access-status')) ?? '', /^401: /);

    assert.deepEqual(external, [], 'no request left the machine');
    // The bad key's 401 and the update's 403 are logged by Chromium as failed loads; nothing else.
    const unexpected = problems.filter((text) => !/status of 40[13]/.test(text));
    assert.deepEqual(unexpected, [], 'no script error and no Content Security Policy violation');
    await page.close();
  });

  it('a share link carries no key, and a link that carries one is never used: the page and its queries stay anonymous', async () => {
    const page = await openPage(byDefault);
    await page.fill('#key', ALICE_KEY);
    await page.click('#credentials button[type=submit]');
    await page.waitForFunction((agent) => document.querySelector('#agent')?.textContent === agent, ALICE);
    const query = 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g';
    await runQuery(page, query);
    await page.waitForSelector('.yasr table tbody tr >> text=graphs/hr', { timeout: 30_000 });
    // The link YASGUI's share button shows (Yasqe's createShareableLink is the tab's getShareableLink).
    const shared = await page.evaluate(() =>
      (window as unknown as { yasgui: { getTab(): { getShareableLink(): string } } }).yasgui.getTab().getShareableLink(),
    );
    await page.click('.yasqe_share');
    const shown = await page.inputValue('.yasqe_sharePopup input');
    assert.equal(shown, shared);
    for (const link of [shared, decodeURIComponent(shared)]) {
      assert.doesNotMatch(link, /sg_demo|alice|authorization|bearer|headers/i, `the share link: ${link}`);
    }
    assert.equal(new URLSearchParams(new URL(shared).hash.slice(1)).get('query'), query, 'the query itself is shared');
    await page.close();

    // A link that does carry alice's key (as the share button of an unfixed page made them),
    // opened in a fresh browser: its own profile, nothing in its storage.
    const forged = new URL(shared);
    const params = new URLSearchParams(forged.hash.slice(1));
    params.set('headers', JSON.stringify({ Authorization: `Bearer ${ALICE_KEY}`, 'X-API-Key': ALICE_KEY }));
    params.set('access_token', ALICE_KEY);
    params.set('endpoint', 'http://127.0.0.1:1/elsewhere');
    forged.hash = params.toString();
    const freshProfile = mkdtempSync(join(tmpdir(), 'sparql-guard-chromium-fresh-'));
    const fresh = await chromium.launchPersistentContext(freshProfile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    try {
      const sent: string[] = [];
      // Each request's headers are read while its page is open; they are awaited before it closes
      // (a read still pending when the page closes fails with "Target page ... has been closed").
      const reading: Promise<void>[] = [];
      const onRequest = (request: Request): void => {
        reading.push(
          request.allHeaders().then((headers) => {
            sent.push(`${request.method()} ${request.url()} ${JSON.stringify(headers)} ${request.postData() ?? ''}`);
          }),
        );
      };
      fresh.on('request', onRequest);
      const before = byDefault.logs.length;
      const opened = await fresh.newPage();
      watch(opened);
      await opened.goto(forged.href);
      await opened.waitForSelector('#access-facts:not([hidden])');
      assert.equal(await opened.textContent('#agent'), 'https://w3id.org/sparql-guard#Anonymous', 'the page says anonymous');
      assert.equal(await opened.inputValue('#key'), '');
      const text = await opened.evaluate(() =>
        (window as unknown as { yasgui: { getTab(): { getYasqe(): { getValue(): string } } } }).yasgui.getTab().getYasqe().getValue(),
      );
      assert.equal(text, query, 'the link still opens its query');
      await opened.click('.yasqe_queryButton');
      await opened.waitForSelector('.yasr table tbody tr >> text=graphs/public', { timeout: 30_000 });
      const rows = await opened.$$eval('.yasr table tbody tr', (items) => items.map((row) => row.textContent ?? ''));
      assert.equal(rows.length, 1, `the public graph only: ${rows.join(' | ')}`);
      // Nor is the link's key kept for later: the tab persisted in local storage has no header.
      const stored = await opened.evaluate(() => JSON.stringify(localStorage));
      assert.doesNotMatch(stored, /sg_demo/);
      fresh.off('request', onRequest);
      await Promise.all(reading);
      await opened.close();
      assert.ok(
        sent.some((line) => line.startsWith('POST ')),
        'the query was sent',
      );
      for (const line of sent) assert.doesNotMatch(line, /sg_demo/, `no request carries the key: ${line}`);
      const lines = byDefault.logs.slice(before).filter((line) => line.path === '/sparql');
      // The page itself (no caller: agent null), then the description and the query, both anonymous.
      const agents = lines.map((line) => line.agent);
      assert.ok(agents.filter((agent) => agent === 'https://w3id.org/sparql-guard#Anonymous').length >= 2, JSON.stringify(agents));
      assert.ok(
        agents.every((agent) => agent === null || agent === 'https://w3id.org/sparql-guard#Anonymous'),
        JSON.stringify(agents),
      );
    } finally {
      await fresh.close();
      rmSync(freshProfile, { recursive: true, force: true });
    }
  });

  it('a link another page opens in this tab shows its query but does not run it with the stored key', async () => {
    const page = await openPage(byDefault);
    await page.fill('#key', ALICE_KEY);
    await page.click('#credentials button[type=submit]');
    await page.waitForFunction((agent) => document.querySelector('#agent')?.textContent === agent, ALICE);
    // The attacker's page, in this very tab, sends it to a link: the tab's session storage still holds the key.
    await page.goto(`http://127.0.0.1:${appPort}/`);
    const query = 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY DESC(?g)';
    const link = `${byDefault.endpoint}#${new URLSearchParams({ query }).toString()}`;
    const posted: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().startsWith(byDefault.endpoint)) posted.push(request.url());
    });
    await page.evaluate((href) => {
      (window as unknown as { location: { href: string } }).location.href = href;
    }, link);
    await page.waitForURL(`${byDefault.endpoint}**`);
    await page.waitForFunction((agent) => document.querySelector('#agent')?.textContent === agent, ALICE);
    await page.waitForTimeout(1_000);
    assert.deepEqual(posted, [], 'no query was sent on load');
    assert.equal(await page.$$eval('.yasr table tbody tr', (rows) => rows.length), 0, 'no answer is shown');
    const text = await page.evaluate(() =>
      (window as unknown as { yasgui: { getTab(): { getYasqe(): { getValue(): string } } } }).yasgui.getTab().getYasqe().getValue(),
    );
    assert.equal(text, query, 'the link opens its query in the editor');
    // The user runs it with the button, in the name of the key they chose.
    await page.click('.yasqe_queryButton');
    await page.waitForSelector('.yasr table tbody tr >> text=graphs/hr', { timeout: 30_000 });
    assert.equal(posted.length, 1);
    await page.close();
  });

  it('a link with a malformed value keeps the page working: its query is shown, the key form works', async () => {
    for (const bad of ['outputSettings=%7Bbad', 'headers=%7Bbad']) {
      const before = problems.length;
      const page = await context.newPage();
      await page.goto(`${byDefault.endpoint}#query=ASK%7B%7D&${bad}`);
      await page.waitForSelector('#access-facts:not([hidden])', { timeout: 10_000 });
      assert.equal(await page.textContent('#agent'), 'https://w3id.org/sparql-guard#Anonymous', bad);
      const text = await page.evaluate(() =>
        (window as unknown as { yasgui: { getTab(): { getYasqe(): { getValue(): string } } } }).yasgui.getTab().getYasqe().getValue(),
      );
      assert.equal(text, 'ASK{}', bad);
      await page.fill('#key', ALICE_KEY);
      await page.click('#credentials button[type=submit]');
      await page.waitForFunction((agent) => document.querySelector('#agent')?.textContent === agent, ALICE);
      assert.deepEqual(problems.slice(before), [], `no script error with ${bad}`);
      await page.close();
    }
  });

  it("Forget takes the previous caller's answer off the screen", async () => {
    const page = await openPage(byDefault);
    await page.fill('#key', ALICE_KEY);
    await page.click('#credentials button[type=submit]');
    await page.waitForFunction((agent) => document.querySelector('#agent')?.textContent === agent, ALICE);
    await runQuery(page, 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g');
    await page.waitForSelector('.yasr table tbody tr >> text=graphs/hr', { timeout: 30_000 });
    await page.click('#forget');
    await page.waitForFunction(() => document.querySelector('#agent')?.textContent === 'https://w3id.org/sparql-guard#Anonymous');
    assert.equal(await page.$$eval('.yasr table tbody tr', (rows) => rows.length), 0);
    assert.doesNotMatch((await page.textContent('.yasr')) ?? '', /graphs\/hr|results? in/);
    // The page still draws the next answer.
    await runQuery(page, 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g');
    await page.waitForSelector('.yasr table tbody tr >> text=graphs/public', { timeout: 30_000 });
    assert.equal(await page.$$eval('.yasr table tbody tr', (rows) => rows.length), 1);
    await page.close();
  });

  it('shows, per granted graph, the predicates hidden from the caller', async () => {
    const page = await openPage(byDefault);
    await page.fill('#key', 'sg_demo_carol_3f6b8e21c9a0d457');
    await page.click('#credentials button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#agent')?.textContent === 'https://example.org/agents/carol');
    assert.deepEqual(await page.$$eval('#graphs li', (items) => items.map((item) => item.textContent)), [
      'https://example.org/graphs/peoplehidden from you: https://example.org/ns#salary',
      'https://example.org/graphs/projectsa row rule decides which records you read',
      'https://example.org/graphs/public',
    ]);
    await page.screenshot({ path: join(SCREENSHOTS, 'query-page-hidden-paths.png'), fullPage: true });
    // alice reads the salaries: nothing is hidden from her.
    await page.fill('#key', ALICE_KEY);
    await page.click('#credentials button[type=submit]');
    await page.waitForFunction((agent) => document.querySelector('#agent')?.textContent === agent, ALICE);
    assert.equal(await page.$$eval('#graphs .hidden-paths', (items) => items.length), 0);
    // bob (research): a row rule (his projects, every column) and a column list (every project's label and status).
    await page.fill('#key', 'sg_demo_bob_research_2a94d0e6b8f5c317');
    await page.click('#credentials button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#agent')?.textContent === 'https://example.org/agents/bob');
    const projects = await page.$$eval('#graphs li', (items) =>
      items.map((item) => item.textContent ?? '').filter((text) => text.includes('graphs/projects')),
    );
    assert.deepEqual(projects, ['https://example.org/graphs/projectsa row rule decides which records you read']);
    await page.close();
  });

  it('a page on another origin calls the guard with credentials only where configured', async () => {
    const call = async (pageOrigin: string) => {
      const page = await context.newPage();
      await page.goto(`${pageOrigin}/`);
      const outcome = await page.evaluate(
        async ({ guards, key }) => {
          const results: Record<string, string> = {};
          for (const [name, endpoint] of Object.entries(guards)) {
            for (const credentials of ['include', 'omit'] as const) {
              try {
                const response = await fetch(
                  `${endpoint}?query=${encodeURIComponent('SELECT (COUNT(*) AS ?n) WHERE { GRAPH <https://example.org/graphs/hr> { ?s ?p ?o } }')}`,
                  {
                    credentials,
                    headers: {
                      authorization: `Bearer ${key}`,
                      'x-requested-with': 'XMLHttpRequest',
                      accept: 'application/sparql-results+json',
                    },
                  },
                );
                const json = (await response.json()) as { results: { bindings: { n: { value: string } }[] } };
                results[`${name} ${credentials}`] = `${response.status} n=${json.results.bindings[0]?.n.value}`;
              } catch (error) {
                results[`${name} ${credentials}`] = `failed: ${(error as Error).name}`;
              }
            }
          }
          return results;
        },
        { guards: { credentials: withCredentials.endpoint, default: byDefault.endpoint }, key: ALICE_KEY },
      );
      await page.close();
      return outcome;
    };
    const listed = await call(`http://127.0.0.1:${appPort}`);
    assert.match(listed['credentials include']!, /^200 n=[1-9]/);
    assert.match(listed['credentials omit']!, /^200 n=[1-9]/);
    assert.equal(listed['default include'], 'failed: TypeError', 'no credentials allowed by default');
    assert.match(listed['default omit']!, /^200 n=[1-9]/);
    // localhost is another origin than 127.0.0.1: not in the list.
    const unlisted = await call(`http://localhost:${appPort}`);
    assert.equal(unlisted['credentials include'], 'failed: TypeError');
    assert.equal(unlisted['credentials omit'], 'failed: TypeError');
    assert.match(unlisted['default omit']!, /^200 n=[1-9]/);
  });
});
