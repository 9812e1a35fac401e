// Query texts in the style of the Berlin SPARQL Benchmark explore mix, each request with its own random constants.

const PREFIXES = `PREFIX bsbm: <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/>
PREFIX bsbm-inst: <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX dc: <http://purl.org/dc/elements/1.1/>
PREFIX rev: <http://purl.org/stuff/rev#>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
`;

/** A source of random numbers in [0, 1). */
type Random = () => number;

const int = (random: Random, max: number): number => 1 + Math.floor(random() * max);
const product = (random: Random): string =>
  `<http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/dataFromProducer${int(random, 500)}/Product${int(random, 100_000)}>`;
const productType = (random: Random): string => `bsbm-inst:ProductType${int(random, 2000)}`;
const feature = (random: Random): string => `bsbm-inst:ProductFeature${int(random, 10_000)}`;
const word = (random: Random): string => ['alarm', 'shiny', 'grey', 'bright', 'heavy', 'compact', 'quiet'][int(random, 7) - 1] ?? 'x';
const date = (random: Random): string => `"2008-0${int(random, 9)}-${10 + int(random, 18)}T00:00:00"^^xsd:dateTime`;
const country = (random: Random): string =>
  `<http://downlode.org/rdf/iso-3166/countries#${['US', 'DE', 'GB', 'JP', 'FR', 'AT'][int(random, 6) - 1]}>`;

/** The shapes: each returns a fresh query text with new constants. */
export const BSBM_SHAPES: readonly ((random: Random) => string)[] = [
  // Q1: products of a type with two features and a numeric property above a value.
  (r) => `${PREFIXES}SELECT DISTINCT ?product ?label WHERE {
  ?product rdfs:label ?label .
  ?product a ${productType(r)} .
  ?product bsbm:productFeature ${feature(r)} .
  ?product bsbm:productFeature ${feature(r)} .
  ?product bsbm:productPropertyNumeric1 ?value1 .
  FILTER (?value1 > ${int(r, 500)})
} ORDER BY ?label LIMIT 10`,
  // Q2: everything about one product.
  (r) => `${PREFIXES}SELECT ?label ?comment ?producer ?f ?propertyTextual1 ?propertyNumeric1 WHERE {
  ${product(r)} rdfs:label ?label ;
    rdfs:comment ?comment ;
    bsbm:producer ?p ;
    dc:publisher ?p ;
    bsbm:productFeature ?f ;
    bsbm:productPropertyTextual1 ?propertyTextual1 ;
    bsbm:productPropertyNumeric1 ?propertyNumeric1 .
  ?p rdfs:label ?producer .
  OPTIONAL { ${product(r)} bsbm:productPropertyTextual4 ?propertyTextual4 }
}`,
  // Q3: products with one feature and without another.
  (r) => `${PREFIXES}SELECT ?product ?label WHERE {
  ?product rdfs:label ?label ; a ${productType(r)} ; bsbm:productFeature ${feature(r)} ;
    bsbm:productPropertyNumeric1 ?p1 ; bsbm:productPropertyNumeric3 ?p3 .
  FILTER (?p1 > ${int(r, 500)} && ?p3 < ${int(r, 500)})
  OPTIONAL { ?product bsbm:productFeature ${feature(r)} . ?product rdfs:label ?testVar }
  FILTER (!bound(?testVar))
} ORDER BY ?label LIMIT 10`,
  // Q4: a union of two feature combinations.
  (r) => `${PREFIXES}SELECT DISTINCT ?product ?label ?propertyTextual WHERE {
  { ?product rdfs:label ?label ; a ${productType(r)} ; bsbm:productFeature ${feature(r)} ;
      bsbm:productPropertyTextual1 ?propertyTextual ; bsbm:productPropertyNumeric1 ?p1 .
    FILTER (?p1 > ${int(r, 500)}) }
  UNION
  { ?product rdfs:label ?label ; a ${productType(r)} ; bsbm:productFeature ${feature(r)} ;
      bsbm:productPropertyTextual1 ?propertyTextual ; bsbm:productPropertyNumeric2 ?p2 .
    FILTER (?p2 > ${int(r, 500)}) }
} ORDER BY ?label OFFSET 5 LIMIT 10`,
  // Q5: products similar to one product.
  (r) => `${PREFIXES}SELECT DISTINCT ?product ?productLabel WHERE {
  ?product rdfs:label ?productLabel .
  FILTER (${product(r)} != ?product)
  ${product(r)} bsbm:productFeature ?prodFeature .
  ?product bsbm:productFeature ?prodFeature .
  ${product(r)} bsbm:productPropertyNumeric1 ?origProperty1 .
  ?product bsbm:productPropertyNumeric1 ?simProperty1 .
  FILTER (?simProperty1 < (?origProperty1 + ${int(r, 200)}) && ?simProperty1 > (?origProperty1 - ${int(r, 200)}))
} ORDER BY ?productLabel LIMIT 5`,
  // Q6: products whose label contains a word.
  (r) => `${PREFIXES}SELECT ?product ?label WHERE {
  ?product rdfs:label ?label ; rdf:type bsbm:Product .
  FILTER regex(?label, "${word(r)}")
}`,
  // Q7: a product with its offers, vendors and reviews.
  (r) => `${PREFIXES}SELECT ?productLabel ?offer ?price ?vendor ?vendorTitle ?review ?revTitle WHERE {
  ${product(r)} rdfs:label ?productLabel .
  OPTIONAL {
    ?offer bsbm:product ${product(r)} ; bsbm:price ?price ; bsbm:vendor ?vendor ; bsbm:validTo ?date .
    ?vendor rdfs:label ?vendorTitle ; bsbm:country ${country(r)} .
    FILTER (?date > ${date(r)})
  }
  OPTIONAL { ?review bsbm:reviewFor ${product(r)} ; rev:reviewer ?reviewer ; dc:title ?revTitle . ?reviewer foaf:name ?name }
}`,
  // Q8: recent English reviews of a product.
  (r) => `${PREFIXES}SELECT ?title ?text ?reviewDate ?reviewer ?reviewerName WHERE {
  ?review bsbm:reviewFor ${product(r)} ; dc:title ?title ; rev:text ?text ; bsbm:reviewDate ?reviewDate ;
    rev:reviewer ?reviewer .
  ?reviewer foaf:name ?reviewerName .
  FILTER langMatches(lang(?text), "EN")
  OPTIONAL { ?review bsbm:rating1 ?rating1 }
} ORDER BY DESC(?reviewDate) LIMIT 20`,
  // Q10: cheap offers for a product from vendors in one country, valid after a date.
  (r) => `${PREFIXES}SELECT DISTINCT ?offer ?price WHERE {
  ?offer bsbm:product ${product(r)} ; bsbm:vendor ?vendor ; dc:publisher ?vendor ; bsbm:deliveryDays ?deliveryDays ;
    bsbm:price ?price ; bsbm:validTo ?date .
  ?vendor bsbm:country ${country(r)} .
  FILTER (?deliveryDays <= ${int(r, 5)} && ?date > ${date(r)})
} ORDER BY xsd:double(str(?price)) LIMIT 10`,
  // Q11: every triple about an offer (a variable predicate).
  (r) => `${PREFIXES}SELECT ?property ?hasValue ?isValueOf WHERE {
  { <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/dataFromVendor${int(r, 100)}/Offer${int(r, 100_000)}> ?property ?hasValue }
  UNION
  { ?isValueOf ?property <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/dataFromVendor${int(r, 100)}/Offer${int(r, 100_000)}> }
}`,
];

/** A small seeded generator, so runs compare. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}
