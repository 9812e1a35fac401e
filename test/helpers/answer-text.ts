// The text of a store's answer with its blank node labels taken out, for tests that look for a value that must not appear.

/**
 * `body` without blank node labels: SPARQL JSON and XML results lose a blank node's value, N-Triples and
 * Turtle lose the label after `_:`. A store labels blank nodes at random (Oxigraph with 32 hex digits), so a
 * label can hold any number a test looks for: `/250/` matched `bf24670b856ea262250928c2489faab7` once in CI.
 */
export function withoutBlankNodeLabels(body: string): string {
  return body
    .replace(/("type"\s*:\s*"bnode"\s*,\s*"value"\s*:\s*)"(?:[^"\\]|\\.)*"/g, '$1""')
    .replace(/("value"\s*:\s*)"(?:[^"\\]|\\.)*"(\s*,\s*"type"\s*:\s*"bnode")/g, '$1""$2')
    .replace(/<bnode>[^<]*<\/bnode>/g, '<bnode></bnode>')
    .replace(/_:[A-Za-z0-9_][A-Za-z0-9_.-]*/g, '_:')
    .replace(/nodeID:\/\/[A-Za-z0-9_]+/g, 'nodeID://');
}
