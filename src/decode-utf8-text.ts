// The text of a file the guard reads (configuration, policies, rules, a query): UTF-8, as JSON,
// Turtle, N3 and SPARQL all require. A byte that is not UTF-8 is refused, not read as U+FFFD:
// a policy saved in Latin-1 would otherwise hide `ex:café`'s look-alike and leave `ex:café` shown.

import { isUtf8 } from 'node:buffer';

/** Fatal on bad bytes; drops a leading byte order mark, as a reader of these formats should. */
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Thrown for bytes that are not UTF-8; `message` names the first line that is not, for the caller to put after the file's name. */
export class NotUtf8Error extends Error {
  constructor(readonly line: number) {
    super(`not valid UTF-8 (line ${line}; save it as UTF-8, e.g. iconv -f latin1 -t utf-8)`);
    this.name = 'NotUtf8Error';
  }
}

/** The text of `bytes` read as UTF-8, without a leading byte order mark; a NotUtf8Error when a byte is not UTF-8. */
export function decodeUtf8Text(bytes: Uint8Array): string {
  if (isUtf8(bytes)) return decoder.decode(bytes);
  // No UTF-8 sequence holds a line feed byte, so the lines can be checked one by one; the loop
  // stops at the first line that is not UTF-8, or at the last, which then is not.
  let line = 1;
  let start = 0;
  let end = bytes.indexOf(0x0a);
  while (end >= 0 && isUtf8(bytes.subarray(start, end))) {
    start = end + 1;
    end = bytes.indexOf(0x0a, start);
    line += 1;
  }
  throw new NotUtf8Error(line);
}
