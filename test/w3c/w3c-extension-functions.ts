// The W3C syntax positives that call made-up function IRIs, and the allowedFunctions that let them plan.

/**
 * Positives that call a made-up function IRI other than an XSD cast: 400 by default, as stores
 * run code under such IRIs; allowed with W3C_ALLOWED_FUNCTIONS.
 */
export const EXTENSION_FUNCTION_TESTS: readonly string[] = [
  'syntax-sparql1/manifest#syntax-expr-05',
  'syntax-sparql1/manifest#syntax-order-05',
  'syntax-sparql1/manifest#syntax-order-06',
  'syntax-sparql2/manifest#syntax-function-01',
  'syntax-sparql2/manifest#syntax-function-02',
  'syntax-sparql2/manifest#syntax-function-03',
  'syntax-sparql2/manifest#syntax-function-04',
  'syntax-query/manifest#test_4',
];

/** The made-up functions those tests call: a namespace entry and two exact ones. */
export const W3C_ALLOWED_FUNCTIONS: readonly string[] = ['http://example.org/ns#', 'http://example.org/name', 'http://example/function'];
