// Unit tests: the protocol request reader's decisions and their order.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GuardError } from '../../src/guard-error.js';
import { readQueryRequest, type RawQueryRequest } from '../../src/http/read-query-request.js';

const Q = 'SELECT * WHERE { ?s ?p ?o }';
const form = (body: string, search = ''): RawQueryRequest => ({
  method: 'POST',
  search,
  contentType: 'application/x-www-form-urlencoded',
  body: Buffer.from(body),
});

function refusal(raw: RawQueryRequest): number {
  try {
    readQueryRequest(raw);
  } catch (error) {
    assert.ok(error instanceof GuardError);
    assert.doesNotMatch(error.message, /\n/);
    return error.status;
  }
  assert.fail('expected a refusal');
}

describe('readQueryRequest', () => {
  it('reads GET with repeated dataset parameters in order', () => {
    const search = new URLSearchParams([
      ['query', Q],
      ['default-graph-uri', 'http://g/1'],
      ['default-graph-uri', 'http://g/2'],
      ['named-graph-uri', 'http://g/3'],
    ]).toString();
    assert.deepEqual(readQueryRequest({ method: 'GET', search, contentType: undefined, body: undefined }), {
      query: Q,
      defaultGraphs: ['http://g/1', 'http://g/2'],
      namedGraphs: ['http://g/3'],
    });
  });

  it('reads a form POST, with dataset parameters from URL and body', () => {
    const request = readQueryRequest(
      form(`query=${encodeURIComponent(Q)}&named-graph-uri=http%3A%2F%2Fg%2Fb`, 'default-graph-uri=http%3A%2F%2Fg%2Fa'),
    );
    assert.deepEqual(request, { query: Q, defaultGraphs: ['http://g/a'], namedGraphs: ['http://g/b'] });
  });

  it('reads application/sparql-query with a charset, dataset from the URL', () => {
    const request = readQueryRequest({
      method: 'POST',
      search: 'default-graph-uri=http%3A%2F%2Fg%2Fa',
      contentType: 'application/sparql-query; charset=UTF-8',
      body: Buffer.from(Q),
    });
    assert.deepEqual(request, { query: Q, defaultGraphs: ['http://g/a'], namedGraphs: [] });
  });

  it('refuses updates with 403 in every form, before anything else', () => {
    assert.equal(refusal({ method: 'GET', search: 'update=DROP%20ALL', contentType: undefined, body: undefined }), 403);
    assert.equal(
      refusal({ method: 'GET', search: `update=x&query=${encodeURIComponent(Q)}`, contentType: undefined, body: undefined }),
      403,
    );
    assert.equal(refusal(form('update=DROP%20ALL')), 403);
    assert.equal(refusal(form(`query=${encodeURIComponent(Q)}&update=`)), 403);
    assert.equal(refusal({ method: 'POST', search: '', contentType: 'application/sparql-update', body: Buffer.from(Q) }), 403);
    // Content type checks come after: an update with a bad charset is still a 403.
    assert.equal(refusal({ method: 'POST', search: 'update=1', contentType: 'text/plain', body: undefined }), 403);
  });

  it('refuses a bearer token given as a parameter (access_token in the URL or the form) with 400, never reading it', () => {
    const search = `query=${encodeURIComponent(Q)}&access_token=sg_secret`;
    assert.equal(refusal({ method: 'GET', search, contentType: undefined, body: undefined }), 400);
    assert.equal(refusal(form(`query=${encodeURIComponent(Q)}&access_token=sg_secret`)), 400);
    assert.equal(refusal(form(`query=${encodeURIComponent(Q)}`, 'access_token=sg_secret')), 400);
    assert.throws(
      () => readQueryRequest({ method: 'GET', search, contentType: undefined, body: undefined }),
      (error: GuardError) => !error.message.includes('sg_secret') && /Authorization header/.test(error.message),
    );
  });

  it('refuses a missing, empty or repeated query with 400', () => {
    assert.equal(refusal({ method: 'GET', search: '', contentType: undefined, body: undefined }), 400);
    assert.equal(refusal({ method: 'GET', search: 'query=', contentType: undefined, body: undefined }), 400);
    assert.equal(refusal({ method: 'GET', search: 'query=a&query=b', contentType: undefined, body: undefined }), 400);
    assert.equal(refusal(form('query=a', 'query=b')), 400);
    assert.equal(refusal({ method: 'POST', search: 'query=a', contentType: 'application/sparql-query', body: Buffer.from(Q) }), 400);
    assert.equal(refusal({ method: 'POST', search: '', contentType: 'application/sparql-query', body: undefined }), 400);
  });

  it('names a query parameter sent with another case or behind a byte order mark, and echoes no other name', () => {
    const messageOf = (raw: RawQueryRequest): string => {
      try {
        readQueryRequest(raw);
      } catch (error) {
        assert.ok(error instanceof GuardError && error.status === 400);
        return error.message;
      }
      assert.fail('expected a refusal');
    };
    const get = (search: string): RawQueryRequest => ({ method: 'GET', search, contentType: undefined, body: undefined });
    assert.equal(
      messageOf(form(`\uFEFFquery=${encodeURIComponent(Q)}`)),
      'the query parameter is missing; the request has a byte order mark (U+FEFF) before `query`: send the body without it',
    );
    assert.equal(
      messageOf(get(`Query=${encodeURIComponent(Q)}`)),
      'the query parameter is missing; the request has `Query`: parameter names are case-sensitive',
    );
    assert.equal(
      messageOf(form(`QUERY=${encodeURIComponent(Q)}`, 'default-graph-uri=x')),
      'the query parameter is missing; the request has `QUERY`: parameter names are case-sensitive',
    );
    assert.equal(messageOf(get('qeury=SECRET')), 'the query parameter is missing');
    assert.equal(
      messageOf(get('query=&Query=x')),
      'the query parameter is missing; the request has `Query`: parameter names are case-sensitive',
    );
  });

  it('refuses a body under a content coding with 415 and Accept-Encoding: identity, naming only a short token', () => {
    const direct = (contentEncoding: string | undefined): RawQueryRequest => ({
      method: 'POST',
      search: '',
      contentType: 'application/sparql-query',
      body: Buffer.from(Q),
      contentEncoding,
    });
    const refused = (contentEncoding: string) => {
      try {
        readQueryRequest(direct(contentEncoding));
      } catch (error) {
        assert.ok(error instanceof GuardError);
        return [error.status, error.message, error.headers['accept-encoding']];
      }
      return assert.fail(contentEncoding);
    };
    const says = (named: string) => `the request body has ${named}: send it without a content coding`;
    assert.deepEqual(refused('gzip'), [415, says('Content-Encoding gzip'), 'identity']);
    assert.deepEqual(refused('identity, BR'), [415, says('Content-Encoding br'), 'identity']);
    assert.deepEqual(refused('deflate,gzip'), [415, says('Content-Encoding deflate, gzip'), 'identity']);
    assert.deepEqual(refused('x'.repeat(25)), [415, says('a Content-Encoding'), 'identity']);
    assert.deepEqual(refused('SELECT * { ?s ?p ?o }'), [415, says('a Content-Encoding'), 'identity']);
    // No coding: read as before; a form too; an update is still a 403 first; a GET has no body to read.
    for (const none of [undefined, '', 'identity', ' Identity ,']) assert.equal(readQueryRequest(direct(none)).query, Q);
    assert.equal(refusal({ ...form(`query=${encodeURIComponent(Q)}`), contentEncoding: 'gzip' }), 415);
    assert.equal(refusal({ ...direct('gzip'), contentType: 'application/sparql-update' }), 403);
    // A transfer coding other than chunked: 400; chunked alone is read.
    assert.equal(refusal({ ...direct(undefined), transferEncoding: 'gzip, chunked' }), 400);
    assert.equal(readQueryRequest({ ...direct(undefined), transferEncoding: 'Chunked' }).query, Q);
    assert.equal(
      readQueryRequest({
        method: 'GET',
        search: `query=${encodeURIComponent(Q)}`,
        contentType: undefined,
        body: undefined,
        contentEncoding: 'gzip',
      }).query,
      Q,
    );
  });

  it('refuses other media types and charsets with 415, a body that is not UTF-8 with 400', () => {
    assert.equal(refusal({ method: 'POST', search: '', contentType: 'application/json', body: Buffer.from('{}') }), 415);
    assert.equal(refusal({ method: 'POST', search: '', contentType: undefined, body: Buffer.from(Q) }), 415);
    assert.equal(
      refusal({ method: 'POST', search: '', contentType: 'application/sparql-query; charset=ISO-8859-1', body: Buffer.from(Q) }),
      415,
    );
    assert.equal(
      refusal({ method: 'POST', search: '', contentType: 'application/sparql-query', body: Buffer.from([0x53, 0xff, 0xfe]) }),
      400,
    );
  });

  it("reads a body whose charset is US-ASCII by any of IANA's names, any case, as UTF-8; a byte above ASCII under it is 400", () => {
    for (const charset of ['us-ascii', 'US-ASCII', '"Us-Ascii"', 'ANSI_X3.4-1968', 'iso646-US', 'csASCII', 'cp367']) {
      for (const contentType of [`application/sparql-query; charset=${charset}`, `application/x-www-form-urlencoded;charset=${charset}`]) {
        const body = contentType.startsWith('application/sparql-query') ? Q : `query=${encodeURIComponent(Q)}`;
        assert.equal(readQueryRequest({ method: 'POST', search: '', contentType, body: Buffer.from(body) }).query, Q, contentType);
      }
    }
    // Escapes in an ASCII form still decode to UTF-8 (URL Standard, section 5).
    const escaped = { method: 'POST', search: '', contentType: 'application/x-www-form-urlencoded; charset=us-ascii' } as const;
    assert.equal(readQueryRequest({ ...escaped, body: Buffer.from('query=ASK%7B%22%C3%A9%22%7D') }).query, 'ASK{"é"}');
    assert.equal(
      refusal({ method: 'POST', search: '', contentType: 'application/sparql-query; charset=us-ascii', body: Buffer.from('ASK{"é"}') }),
      400,
    );
    for (const charset of ['ascii', 'latin1', 'utf-16', 'us-ascii2']) {
      assert.equal(
        refusal({ method: 'POST', search: '', contentType: `application/sparql-query; charset=${charset}`, body: Buffer.from(Q) }),
        415,
        charset,
      );
    }
  });

  it('refuses percent-escapes that are not UTF-8 with 400, in the URL and in a form, as it does a raw body', () => {
    const bad = 'query=ASK%7B%3Fs%20%3Fp%20%22%C3%22%7D';
    for (const raw of [
      { method: 'GET', search: bad, contentType: undefined, body: undefined } as const,
      form(bad),
      form(`query=${encodeURIComponent(Q)}`, 'default-graph-uri=urn%3A%FF'),
      { method: 'POST', search: 'named-graph-uri=%E2%82', contentType: 'application/sparql-query', body: Buffer.from(Q) } as const,
    ]) {
      assert.throws(
        () => readQueryRequest(raw),
        (error) =>
          error instanceof GuardError && error.status === 400 && error.code === 'bad_request' && /not valid UTF-8/.test(error.message),
        raw.search || String(raw.body),
      );
    }
  });
});
