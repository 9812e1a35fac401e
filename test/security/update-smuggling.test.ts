// Bypass class: update smuggling in every form; the store must never see a write.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeOnEveryStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

const MARK = 'SMUGGLED-WRITE-9f3a';
const INSERT = `INSERT DATA { GRAPH <http://example.org/g/public1> { <urn:x:s> <urn:x:p> "${MARK}" } }`;
const UPDATE = 'application/sparql-update';

const updates = [
  INSERT,
  `insert data { <urn:x:s> <urn:x:p> "${MARK}" }`,
  `PREFIX ex: <http://example.org/>\nBASE <http://example.org/>\n# a comment\n${INSERT}`,
  `DELETE WHERE { GRAPH <http://example.org/g/public1> { ?s ?p ?o } }`,
  `DELETE { ?s ?p ?o } INSERT { ?s ?p "${MARK}" } WHERE { ?s ?p ?o }`,
  `WITH <http://example.org/g/public1> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }`,
  `DROP ALL`,
  `CLEAR DEFAULT`,
  `CREATE GRAPH <urn:x:new>`,
  `LOAD <http://127.0.0.1:1/data.ttl>`,
  `COPY <http://example.org/g/secret> TO <http://example.org/g/public1>`,
  `MOVE <http://example.org/g/secret> TO <http://example.org/g/public1>`,
  `ADD <http://example.org/g/secret> TO <http://example.org/g/public1>`,
  `\\u0049NSERT DATA { <urn:x:s> <urn:x:p> "${MARK}" }`,
];

const attacks: Attack[] = [
  ...updates.map((text, i): Attack => ({ name: `update #${i} as query= (form)`, caller: 'keeper', query: text, expect: { status: 403 } })),
  ...updates.map((text, i): Attack => ({
    name: `update #${i} as GET ?query=`,
    caller: 'keeper',
    method: 'get',
    query: text,
    expect: { status: 403 },
  })),
  ...updates.map((text, i): Attack => ({
    name: `update #${i} as application/sparql-query body`,
    caller: 'keeper',
    method: 'direct',
    query: text,
    expect: { status: 403 },
  })),
  { name: 'update= form parameter', caller: 'keeper', query: undefined, params: { update: [INSERT] }, expect: { status: 403 } },
  { name: 'update= beside a query', caller: 'keeper', query: 'ASK {}', params: { update: [INSERT] }, expect: { status: 403 } },
  {
    name: 'update= in the URL of GET',
    caller: 'keeper',
    method: 'get',
    query: 'ASK {}',
    params: { update: [INSERT] },
    expect: { status: 403 },
  },
  {
    name: 'application/sparql-update body',
    caller: 'keeper',
    method: 'direct',
    query: INSERT,
    headers: { 'content-type': UPDATE },
    expect: { status: 403 },
  },
  {
    name: 'application/sparql-update body holding a SELECT (Virtuoso runs it)',
    caller: 'keeper',
    method: 'direct',
    query: 'SELECT * WHERE { ?s ?p ?o }',
    headers: { 'content-type': `${UPDATE}; charset=utf-8` },
    expect: { status: 403 },
  },
  {
    name: 'APPLICATION/SPARQL-UPDATE in upper case',
    caller: 'keeper',
    method: 'direct',
    query: INSERT,
    headers: { 'content-type': UPDATE.toUpperCase() },
    expect: { status: 403 },
  },
  { name: 'query then update in one request text', caller: 'keeper', query: `ASK {} ; ${INSERT}`, expect: { status: 400 } },
  { name: 'update then query in one request text', caller: 'keeper', query: `${INSERT} ; ASK {}`, expect: { status: 403 } },
  { name: 'empty query= (Virtuoso treats it as an update)', caller: 'keeper', query: '', expect: { status: 400 } },
  {
    name: 'two query= parameters (Virtuoso runs the last)',
    caller: 'keeper',
    query: 'ASK {}',
    params: { query: [INSERT] },
    expect: { status: 400 },
  },
];

describeOnEveryStore('update smuggling', (guard, store) => {
  itAttacks(attacks, guard, store);
  it('left no trace in the store (asked directly, every graph)', async () => {
    const response = await fetch(guard().guard.upstreamUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
      body: new URLSearchParams({ query: `ASK { { ?s ?p "${MARK}" } UNION { GRAPH ?g { ?s ?p "${MARK}" } } }` }),
    });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { boolean: boolean }).boolean, false, `${store.name} holds the smuggled triple`);
  });
});
