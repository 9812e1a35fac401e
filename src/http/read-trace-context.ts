// The request's W3C trace context (Trace Context Level 1, https://www.w3.org/TR/trace-context/): the caller's trace continued, or a new one, with the guard's own span.

import { randomFillSync } from 'node:crypto';
import type { TraceHeaders } from '../upstream/create-upstream.js';

/** The trace of one request as the guard carries it on: the trace, the guard's span in it, and the flags. */
export interface TraceContext {
  /** 32 lower-case hex digits, not all zeros. */
  readonly traceId: string;
  /** The guard's own span: 16 lower-case hex digits, new for each request; the parent of the store's span. */
  readonly spanId: string;
  /** The caller's span (the parent of the guard's), when the caller sent a valid traceparent. */
  readonly parentId: string | undefined;
  /** trace-flags, 2 lower-case hex digits (01: sampled). */
  readonly flags: string;
  /**
   * The headers sent to the store: `traceparent` of the same trace with the guard's span as
   * parent, and the caller's `tracestate` with its trace, as {@link readTraceState} reads it (none for a new trace).
   */
  readonly headers: TraceHeaders;
}

/** Section 3.3.1.5: at least 512 characters are passed on; a longer list loses whole members. */
const MAX_TRACESTATE = 512;
/** Section 3.3.1.5: members longer than this go first when the list is too long. */
const LONG_MEMBER = 128;
/** Section 3.3.1: a list has at most 32 members. */
const MAX_MEMBERS = 32;
/** key = ( lcalpha / DIGIT ) 0*255 ( lcalpha / DIGIT / "_" / "-" / "*" / "/" / "@" ) (section 3.3.1.3.1). */
const KEY = /^[a-z0-9][a-z0-9_\-*/@]{0,255}$/;
/** value = 0*255( %x20 / nblk-chr ) nblk-chr: printable ASCII but "," and "=", not ending in a space (section 3.3.1.3.2). */
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * The `tracestate` to send on, from the caller's (repeated headers already joined with commas),
 * or undefined. Empty members and the spaces and tabs around members go (section 3.3.1); a
 * member that is not `key=value` by the grammar, or more than 32 members, discard the whole
 * header (section 4.3: a vendor may discard a tracestate it cannot parse; the W3C test suite
 * asks it at its strict level). Duplicate keys are kept: only their sender may drop them. Over
 * 512 characters, whole members go, those over 128 characters first, then from the end
 * (section 3.3.1.5).
 */
export function readTraceState(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const members: string[] = [];
  for (const item of value.split(',')) {
    const member = item.replace(/^[ \t]+|[ \t]+$/g, '');
    if (member === '') continue;
    const equals = member.indexOf('=');
    if (equals < 0 || !KEY.test(member.slice(0, equals)) || !VALUE.test(member.slice(equals + 1))) return undefined;
    members.push(member);
  }
  if (members.length > MAX_MEMBERS) return undefined;
  const length = () => members.reduce((sum, member) => sum + member.length, members.length - 1);
  while (members.length > 0 && length() > MAX_TRACESTATE) {
    const long = members.findLastIndex((member) => member.length > LONG_MEMBER);
    members.splice(long < 0 ? members.length - 1 : long, 1);
  }
  return members.length === 0 ? undefined : members.join(',');
}

/**
 * version "-" trace-id "-" parent-id "-" trace-flags (section 3.2.2). Version 00 has exactly
 * these four fields; a later version may append fields after a further "-" (section 3.2.4).
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** Random bytes drawn in blocks: one system call per 256 requests rather than one per request. */
const pool = Buffer.alloc(256 * 24);
let used = pool.length;

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}

/** A new span id, never all zeros (section 3.2.2.4). */
function newSpanId(): string {
  for (;;) {
    const id = randomHex(8);
    if (id !== ZERO_SPAN) return id;
  }
}

/**
 * The trace context of a request whose `traceparent` header is `header` (undefined: none, or
 * sent more than once, which section 3.2 leaves to the receiver: a new trace then). A valid
 * value is continued; an invalid one (another version with the wrong shape, version ff,
 * upper-case hex, an all-zero trace or parent id, extra fields after version 00) starts a
 * new trace, as section 3.2.2 asks a receiver that cannot parse it to do. A new trace is
 * sampled (flags 01): the guard is then the first to see the request.
 */
export function readTraceContext(header: string | undefined, state?: string): TraceContext {
  const spanId = newSpanId();
  const parsed = header === undefined ? null : TRACEPARENT.exec(header.trim());
  if (parsed !== null) {
    const [, version, traceId, parentId, flags, rest] = parsed as unknown as [string, string, string, string, string, string | undefined];
    const valid = version !== 'ff' && (version !== '00' || rest === undefined) && traceId !== ZERO_TRACE && parentId !== ZERO_SPAN;
    if (valid) {
      // Only the sampled flag is defined; the others are sent on as zero (section 3.2.2.5), and a
      // later version is sent on as version 00 with the fields this version knows (section 3.2.4).
      const ownFlags = (Number.parseInt(flags, 16) & 0x01) === 1 ? '01' : '00';
      const traceparent = `00-${traceId}-${spanId}-${ownFlags}`;
      const tracestate = readTraceState(state);
      const headers = tracestate === undefined ? { traceparent } : { traceparent, tracestate };
      return { traceId, spanId, parentId, flags: ownFlags, headers };
    }
  }
  let traceId = randomHex(16);
  while (traceId === ZERO_TRACE) traceId = randomHex(16);
  return { traceId, spanId, parentId: undefined, flags: '01', headers: { traceparent: `00-${traceId}-${spanId}-01` } };
}
