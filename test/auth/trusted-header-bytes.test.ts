// Trusted header values over real HTTP, as docs/authentication.md says: one character per byte (Latin-1), whoever sends them.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { rawRequest } from '../reliability/raw-request.js';

const PREFIX = 'https://idp.example.org/users/';
const ASK = encodeURIComponent('ASK {}');

describe('trusted header values are read a character per byte', () => {
  let t: TestGuard;
  before(async () => {
    t = await startTestGuard({
      explain: true,
      auth: { apiKeys: [], trustedHeaders: { agent: 'X-Remote-User', groups: 'X-Remote-Groups', agentPrefix: PREFIX } },
    });
  });
  after(() => t.close());

  /** The agent and groups explain reports for raw header bytes. */
  async function explained(user: Buffer, groups: Buffer): Promise<{ agent: string; groups: string[] }> {
    const { host } = new URL(t.endpoint);
    const head = Buffer.concat([
      Buffer.from(
        `GET ${new URL(t.endpoint).pathname}/explain?query=${ASK} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\nX-Remote-User: `,
      ),
      user,
      Buffer.from('\r\nX-Remote-Groups: '),
      groups,
      Buffer.from('\r\n\r\n'),
    ]);
    const answer = await rawRequest(t.endpoint, head);
    assert.equal(answer.status, 200, answer.body);
    // rawRequest reads the answer a character per byte; the JSON itself is UTF-8.
    const body = Buffer.from(answer.body.slice(answer.body.indexOf('{'), answer.body.lastIndexOf('}') + 1), 'latin1').toString('utf8');
    const { agent, groups: named } = JSON.parse(body) as { agent: string; groups: string[] };
    return { agent, groups: named };
  }

  it('the byte FC is ü, and the two UTF-8 bytes of ü are two characters', async () => {
    assert.deepEqual(await explained(Buffer.from([0x6a, 0xfc, 0x72]), Buffer.from('Gr\u00fcn', 'latin1')), {
      agent: `${PREFIX}j\u00fcr`,
      groups: ['Gr\u00fcn'],
    });
    const utf8 = await explained(Buffer.from('j\u00fcr', 'utf8'), Buffer.from('Gr\u00fcn', 'utf8'));
    assert.equal(utf8.agent, `${PREFIX}j\u00c3\u00bcr`);
    assert.deepEqual(utf8.groups, ['Gr\u00c3\u00bcn']);
    // Percent-encoded, as the docs advise, the name is ASCII and the IRI's text as written.
    assert.equal((await explained(Buffer.from('j%C3%BCr'), Buffer.from('x'))).agent, `${PREFIX}j%C3%BCr`);
  });

  it("is what JavaScript's fetch sends for ü", async () => {
    const response = await fetch(`${t.endpoint}/explain?query=${ASK}`, { headers: { 'X-Remote-User': 'j\u00fcr' } });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { agent: string }).agent, `${PREFIX}j\u00fcr`);
  });
});
