// The first key written twice in one object of a JSON text: JSON.parse keeps the last silently.

/** A key written twice in one object: where (as the config's key paths write it) and on which lines. */
export interface RepeatedKey {
  /** The object's path and the key, `auth.apiKeys[0].agent`; '' parts as config paths write them. */
  readonly path: readonly (string | number)[];
  readonly firstLine: number;
  readonly secondLine: number;
}

interface ObjectFrame {
  readonly kind: 'object';
  readonly keys: Map<string, number>;
  expectingKey: boolean;
  /** The key whose value is being read, or undefined between members. */
  current: string | undefined;
}
interface ArrayFrame {
  readonly kind: 'array';
  index: number;
}

/**
 * Scans a text that JSON.parse accepted and returns the first key repeated within one object
 * (compared as JSON.parse decodes them, so `"a"` and `"\u0061"` are the same key), or undefined.
 * RFC 8259 §4 says names SHOULD be unique and leaves a repeat's meaning to the parser; a
 * configuration that says `"explain": false` and later `"explain": true` must not be read as
 * either without the operator knowing.
 */
export function findRepeatedKey(text: string): RepeatedKey | undefined {
  const stack: (ObjectFrame | ArrayFrame)[] = [];
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const top = stack.at(-1);
    if (char === '\n') line++;
    else if (char === '{') stack.push({ kind: 'object', keys: new Map(), expectingKey: true, current: undefined });
    else if (char === '[') stack.push({ kind: 'array', index: 0 });
    else if (char === '}' || char === ']') stack.pop();
    else if (char === ',') {
      if (top?.kind === 'object') top.expectingKey = true;
      else if (top?.kind === 'array') top.index++;
    } else if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.kind === 'object' && top.expectingKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        const firstLine = top.keys.get(key);
        if (firstLine !== undefined) return { path: [...pathOf(stack.slice(0, -1)), key], firstLine, secondLine: line };
        top.keys.set(key, line);
        top.expectingKey = false;
        top.current = key;
      }
      i = end; // a string holds no newline that is not escaped
    }
  }
  return undefined;
}

/** The path of the innermost frame's value: each object's current key, each array's index. */
function pathOf(frames: readonly (ObjectFrame | ArrayFrame)[]): (string | number)[] {
  return frames.map((frame) => (frame.kind === 'object' ? (frame.current ?? '') : frame.index));
}
