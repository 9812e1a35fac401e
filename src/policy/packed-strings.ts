// A column of strings as UTF-8 bytes and end offsets: sent to another thread by transfer, not copied string by string.

/** Strings `0..ends.length - 1`: string i is `bytes` from `ends[i - 1]` (0 for the first) to `ends[i]`, UTF-8. */
export interface PackedStrings {
  readonly bytes: Uint8Array;
  readonly ends: Int32Array;
}

/**
 * Packs `values` into buffers of their own (so both can be transferred). A structured clone of a
 * hundred thousand strings is built on the receiving thread in one step (tens of milliseconds on
 * the thread that serves requests); packed, the receiver reads each string when it needs it.
 */
export function packStrings(values: readonly string[]): PackedStrings {
  const ends = new Int32Array(values.length);
  let total = 0;
  for (let at = 0; at < values.length; at += 1) {
    total += Buffer.byteLength(values[at] as string, 'utf8');
    ends[at] = total;
  }
  const bytes = Buffer.from(new ArrayBuffer(total));
  let start = 0;
  for (let at = 0; at < values.length; at += 1) {
    bytes.write(values[at] as string, start, 'utf8');
    start = ends[at] as number;
  }
  return { bytes: new Uint8Array(bytes.buffer, 0, total), ends };
}

/** A reader of string `index` of `packed`. */
export function readPackedStrings(packed: PackedStrings): (index: number) => string {
  const bytes = Buffer.from(packed.bytes.buffer, packed.bytes.byteOffset, packed.bytes.byteLength);
  const { ends } = packed;
  return (index) => bytes.toString('utf8', index === 0 ? 0 : (ends[index - 1] as number), ends[index] as number);
}
