// Bypass class: conflicting or odd credentials; ambiguity is a 401, never the stronger identity.

import { CALLERS, describeOnEveryStore, itAttacks, type Attack } from '../helpers/rig-stores.js';

const BITS_QUERY = 'PREFIX ex: <http://example.org/>\nSELECT DISTINCT ?b WHERE { ?f ex:graphBit ?b }';
const keeper = CALLERS.keeper;
const reader = CALLERS.reader;

const attacks: Attack[] = [
  {
    name: 'Bearer reader and X-API-Key keeper',
    caller: 'reader',
    query: BITS_QUERY,
    headers: { 'x-api-key': keeper },
    expect: { status: 401 },
  },
  {
    name: 'X-API-Key reader and Bearer keeper',
    query: BITS_QUERY,
    headers: { 'x-api-key': reader, authorization: `Bearer ${keeper}` },
    expect: { status: 401 },
  },
  {
    name: 'two keys in one Authorization header',
    query: BITS_QUERY,
    headers: { authorization: `Bearer ${reader}, Bearer ${keeper}` },
    expect: { status: 401 },
  },
  {
    name: 'two keys in one X-API-Key header',
    query: BITS_QUERY,
    headers: { 'x-api-key': `${reader}, ${keeper}` },
    expect: { status: 401 },
  },
  { name: 'a key with trailing text', query: BITS_QUERY, headers: { authorization: `Bearer ${keeper}x` }, expect: { status: 401 } },
  { name: 'a key prefix', query: BITS_QUERY, headers: { authorization: `Bearer ${keeper.slice(0, -1)}` }, expect: { status: 401 } },
  { name: 'empty X-API-Key', query: BITS_QUERY, headers: { 'x-api-key': '' }, expect: { status: 401 } },
  { name: 'Bearer without a key', query: BITS_QUERY, headers: { authorization: 'Bearer ' }, expect: { status: 401 } },
  {
    name: 'same key twice (Bearer and X-API-Key) is one identity',
    caller: 'reader',
    query: BITS_QUERY,
    headers: { 'x-api-key': reader },
    expect: { bits: [2, 8] },
  },
  {
    name: 'trusted headers are ignored when not configured',
    query: BITS_QUERY,
    headers: { 'x-agent': 'http://example.org/agents/keeper', 'x-groups': 'team-a', 'x-forwarded-user': 'keeper' },
    expect: { bits: [2] },
  },
  {
    name: 'Basic credentials carry the API key as password',
    caller: 'keeper',
    query: BITS_QUERY,
    headers: { authorization: `Basic ${Buffer.from(`anyone:${keeper}`).toString('base64')}` },
    expect: { bits: [2, 4, 8, 16, 32] },
  },
  {
    name: 'Basic with the reader key and the keeper as user name is the reader',
    caller: 'reader',
    query: BITS_QUERY,
    headers: { authorization: `Basic ${Buffer.from(`keeper:${reader}`).toString('base64')}` },
    expect: { bits: [2, 8] },
  },
  {
    name: 'Basic reader and X-API-Key keeper',
    query: BITS_QUERY,
    headers: { authorization: `Basic ${Buffer.from(`u:${reader}`).toString('base64')}`, 'x-api-key': keeper },
    expect: { status: 401 },
  },
  {
    name: 'Basic with the key as user name and no password',
    query: BITS_QUERY,
    headers: { authorization: `Basic ${Buffer.from(`${keeper}:`).toString('base64')}` },
    expect: { status: 401 },
  },
  { name: 'a key in a cookie is ignored', query: BITS_QUERY, headers: { cookie: `api_key=${keeper}` }, expect: { bits: [2] } },
  { name: 'a key as a query parameter is ignored', query: BITS_QUERY, params: { api_key: [keeper], key: [keeper] }, expect: { bits: [2] } },
];

describeOnEveryStore('conflicting credentials', (guard, store) => {
  itAttacks(attacks, guard, store);
});
