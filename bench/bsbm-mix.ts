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

/** Constants a mix draws from the generated data (bench/bsbm-data.ts). */
export interface BsbmPicks {
  readonly products: readonly string[];
  readonly leafTypes: readonly string[];
  readonly features: readonly string[];
  readonly producers: readonly string[];
  readonly offers: readonly string[];
  readonly reviews: readonly string[];
  readonly countries: readonly string[];
}

/** One query of a mix: its name in the BSBM specification and a text with constants drawn from the data. */
export interface BsbmQuery {
  readonly name: string;
  readonly text: (data: BsbmPicks, random: Random) => string;
}

const from = <T>(list: readonly T[], random: Random): T => list[Math.floor(random() * list.length)] as T;
const dateTime = (random: Random): string =>
  `"2008-${String(int(random, 9)).padStart(2, '0')}-${10 + int(random, 18)}T00:00:00"^^xsd:dateTime`;

/**
 * The explore use case of BSBM V3 (queries 1-5 and 7-12; 6 is not part of the V3 mix), written after
 * its specification, with its parameters drawn from the generated data so every query finds rows.
 */
export const BSBM_EXPLORE: readonly BsbmQuery[] = [
  {
    name: 'explore 1',
    text: (d, r) => {
      const type = from(d.leafTypes, r);
      return `${PREFIXES}SELECT DISTINCT ?product ?label WHERE {
  ?product rdfs:label ?label .
  ?product a <${type}> .
  ?product bsbm:productFeature <${from(d.features, r)}> .
  ?product bsbm:productPropertyNumeric1 ?value1 .
  FILTER (?value1 > ${int(r, 1000)})
} ORDER BY ?label LIMIT 10`;
    },
  },
  {
    name: 'explore 2',
    text: (d, r) => {
      const p = `<${from(d.products, r)}>`;
      return `${PREFIXES}SELECT ?label ?comment ?producer ?productFeature ?propertyTextual1 ?propertyTextual2 ?propertyTextual3
  ?propertyNumeric1 ?propertyNumeric2 ?propertyTextual4 ?propertyTextual5 ?propertyNumeric4 WHERE {
  ${p} rdfs:label ?label .
  ${p} rdfs:comment ?comment .
  ${p} bsbm:producer ?p .
  ?p rdfs:label ?producer .
  ${p} dc:publisher ?p .
  ${p} bsbm:productFeature ?f .
  ?f rdfs:label ?productFeature .
  ${p} bsbm:productPropertyTextual1 ?propertyTextual1 .
  ${p} bsbm:productPropertyTextual2 ?propertyTextual2 .
  ${p} bsbm:productPropertyTextual3 ?propertyTextual3 .
  ${p} bsbm:productPropertyNumeric1 ?propertyNumeric1 .
  ${p} bsbm:productPropertyNumeric2 ?propertyNumeric2 .
  OPTIONAL { ${p} bsbm:productPropertyTextual4 ?propertyTextual4 }
  OPTIONAL { ${p} bsbm:productPropertyTextual5 ?propertyTextual5 }
  OPTIONAL { ${p} bsbm:productPropertyNumeric4 ?propertyNumeric4 }
}`;
    },
  },
  {
    name: 'explore 3',
    text: (d, r) => `${PREFIXES}SELECT ?product ?label WHERE {
  ?product rdfs:label ?label .
  ?product a <${from(d.leafTypes, r)}> .
  ?product bsbm:productFeature <${from(d.features, r)}> .
  ?product bsbm:productPropertyNumeric1 ?p1 .
  FILTER (?p1 > ${int(r, 1000)})
  ?product bsbm:productPropertyNumeric3 ?p3 .
  FILTER (?p3 < ${1000 + int(r, 1000)})
  OPTIONAL { ?product bsbm:productFeature <${from(d.features, r)}> . ?product rdfs:label ?testVar }
  FILTER (!bound(?testVar))
} ORDER BY ?label LIMIT 10`,
  },
  {
    name: 'explore 4',
    text: (d, r) => {
      const type = from(d.leafTypes, r);
      return `${PREFIXES}SELECT DISTINCT ?product ?label ?propertyTextual WHERE {
  { ?product rdfs:label ?label .
    ?product a <${type}> .
    ?product bsbm:productFeature <${from(d.features, r)}> .
    ?product bsbm:productPropertyTextual1 ?propertyTextual .
    ?product bsbm:productPropertyNumeric1 ?p1 .
    FILTER (?p1 > ${int(r, 1000)}) }
  UNION
  { ?product rdfs:label ?label .
    ?product a <${type}> .
    ?product bsbm:productFeature <${from(d.features, r)}> .
    ?product bsbm:productPropertyTextual1 ?propertyTextual .
    ?product bsbm:productPropertyNumeric2 ?p2 .
    FILTER (?p2 > ${int(r, 1000)}) }
} ORDER BY ?label OFFSET 5 LIMIT 10`;
    },
  },
  {
    name: 'explore 5',
    text: (d, r) => {
      const p = `<${from(d.products, r)}>`;
      return `${PREFIXES}SELECT DISTINCT ?product ?productLabel WHERE {
  ?product rdfs:label ?productLabel .
  FILTER (${p} != ?product)
  ${p} bsbm:productFeature ?prodFeature .
  ?product bsbm:productFeature ?prodFeature .
  ${p} bsbm:productPropertyNumeric1 ?origProperty1 .
  ?product bsbm:productPropertyNumeric1 ?simProperty1 .
  FILTER (?simProperty1 < (?origProperty1 + 120) && ?simProperty1 > (?origProperty1 - 120))
  ${p} bsbm:productPropertyNumeric2 ?origProperty2 .
  ?product bsbm:productPropertyNumeric2 ?simProperty2 .
  FILTER (?simProperty2 < (?origProperty2 + 170) && ?simProperty2 > (?origProperty2 - 170))
} ORDER BY ?productLabel LIMIT 5`;
    },
  },
  {
    name: 'explore 7',
    text: (d, r) => {
      const p = `<${from(d.products, r)}>`;
      return `${PREFIXES}SELECT ?productLabel ?offer ?price ?vendor ?vendorTitle ?review ?revTitle ?reviewer ?revName ?rating1 ?rating2 WHERE {
  ${p} rdfs:label ?productLabel .
  OPTIONAL {
    ?offer bsbm:product ${p} .
    ?offer bsbm:price ?price .
    ?offer bsbm:vendor ?vendor .
    ?vendor rdfs:label ?vendorTitle .
    ?vendor bsbm:country <${from(d.countries, r)}> .
    ?offer dc:publisher ?vendor .
    ?offer bsbm:validTo ?date .
    FILTER (?date > ${dateTime(r)})
  }
  OPTIONAL {
    ?review bsbm:reviewFor ${p} .
    ?review rev:reviewer ?reviewer .
    ?reviewer foaf:name ?revName .
    ?review dc:title ?revTitle .
    OPTIONAL { ?review bsbm:rating1 ?rating1 . }
    OPTIONAL { ?review bsbm:rating2 ?rating2 . }
  }
}`;
    },
  },
  {
    name: 'explore 8',
    text: (d, r) => `${PREFIXES}SELECT ?title ?text ?reviewDate ?reviewer ?reviewerName ?rating1 ?rating2 ?rating3 ?rating4 WHERE {
  ?review bsbm:reviewFor <${from(d.products, r)}> .
  ?review dc:title ?title .
  ?review rev:text ?text .
  FILTER langMatches(lang(?text), "EN")
  ?review bsbm:reviewDate ?reviewDate .
  ?review rev:reviewer ?reviewer .
  ?reviewer foaf:name ?reviewerName .
  OPTIONAL { ?review bsbm:rating1 ?rating1 . }
  OPTIONAL { ?review bsbm:rating2 ?rating2 . }
  OPTIONAL { ?review bsbm:rating3 ?rating3 . }
  OPTIONAL { ?review bsbm:rating4 ?rating4 . }
} ORDER BY DESC(?reviewDate) LIMIT 20`,
  },
  { name: 'explore 9', text: (d, r) => `${PREFIXES}DESCRIBE ?x WHERE { <${from(d.reviews, r)}> rev:reviewer ?x }` },
  {
    name: 'explore 10',
    text: (d, r) => `${PREFIXES}SELECT DISTINCT ?offer ?price WHERE {
  ?offer bsbm:product <${from(d.products, r)}> .
  ?offer bsbm:vendor ?vendor .
  ?offer dc:publisher ?vendor .
  ?vendor bsbm:country <${from(d.countries, r)}> .
  ?offer bsbm:deliveryDays ?deliveryDays .
  FILTER (?deliveryDays <= 10)
  ?offer bsbm:price ?price .
  ?offer bsbm:validTo ?date .
  FILTER (?date > ${dateTime(r)})
} ORDER BY xsd:double(str(?price)) LIMIT 10`,
  },
  {
    name: 'explore 11',
    text: (d, r) => {
      const o = `<${from(d.offers, r)}>`;
      return `${PREFIXES}SELECT ?property ?hasValue ?isValueOf WHERE {
  { ${o} ?property ?hasValue }
  UNION
  { ?isValueOf ?property ${o} }
}`;
    },
  },
  {
    name: 'explore 12',
    text: (d, r) => {
      const o = `<${from(d.offers, r)}>`;
      return `${PREFIXES}PREFIX bsbm-export: <http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/export/>
CONSTRUCT {
  ${o} bsbm-export:product ?productURI .
  ${o} bsbm-export:productlabel ?productlabel .
  ${o} bsbm-export:vendor ?vendorname .
  ${o} bsbm-export:vendorhomepage ?vendorhomepage .
  ${o} bsbm-export:offerURL ?offerURL .
  ${o} bsbm-export:price ?price .
  ${o} bsbm-export:deliveryDays ?deliveryDays .
  ${o} bsbm-export:validuntil ?validTo
} WHERE {
  ${o} bsbm:product ?productURI .
  ?productURI rdfs:label ?productlabel .
  ${o} bsbm:vendor ?vendorURI .
  ?vendorURI rdfs:label ?vendorname .
  ?vendorURI foaf:homepage ?vendorhomepage .
  ${o} bsbm:offerWebpage ?offerURL .
  ${o} bsbm:price ?price .
  ${o} bsbm:deliveryDays ?deliveryDays .
  ${o} bsbm:validTo ?validTo
}`;
    },
  },
];

/** The business intelligence use case of BSBM V3 (queries 1-8), written after its specification. */
export const BSBM_BI: readonly BsbmQuery[] = [
  {
    name: 'BI 1',
    text: (d, r) => `${PREFIXES}SELECT ?productType ?reviewCount {
  { SELECT ?productType (COUNT(?review) AS ?reviewCount) {
      ?productType a bsbm:ProductType .
      ?product a ?productType .
      ?product bsbm:producer ?producer .
      ?producer bsbm:country <${from(d.countries, r)}> .
      ?review bsbm:reviewFor ?product .
      ?review rev:reviewer ?reviewer .
      ?reviewer bsbm:country <${from(d.countries, r)}> .
    } GROUP BY ?productType }
} ORDER BY DESC(?reviewCount) ?productType LIMIT 10`,
  },
  {
    name: 'BI 2',
    text: (d, r) => {
      const p = `<${from(d.products, r)}>`;
      return `${PREFIXES}SELECT ?otherProduct ?sameFeatures {
  ?otherProduct a bsbm:Product .
  FILTER (?otherProduct != ${p})
  { SELECT ?otherProduct (COUNT(?otherFeature) AS ?sameFeatures) {
      ${p} bsbm:productFeature ?feature .
      ?otherProduct bsbm:productFeature ?otherFeature .
      FILTER (?feature = ?otherFeature)
    } GROUP BY ?otherProduct }
} ORDER BY DESC(?sameFeatures) ?otherProduct LIMIT 10`;
    },
  },
  {
    name: 'BI 3',
    text: (_d, r) => {
      const month = int(r, 9);
      const day = (m: number) => `"2008-${String(m).padStart(2, '0')}-01"^^xsd:date`;
      return `${PREFIXES}SELECT ?product (xsd:float(?monthCount) / ?monthBeforeCount AS ?ratio) {
  { SELECT ?product (COUNT(?review) AS ?monthCount) {
      ?review bsbm:reviewFor ?product .
      ?review dc:date ?date .
      FILTER (?date >= ${day(month + 1)} && ?date < ${day(month + 2)})
    } GROUP BY ?product }
  { SELECT ?product (COUNT(?review) AS ?monthBeforeCount) {
      ?review bsbm:reviewFor ?product .
      ?review dc:date ?date .
      FILTER (?date >= ${day(month)} && ?date < ${day(month + 1)})
    } GROUP BY ?product HAVING (COUNT(?review) > 0) }
} ORDER BY DESC(xsd:float(?monthCount) / ?monthBeforeCount) ?product LIMIT 10`;
    },
  },
  {
    name: 'BI 4',
    text: (d, r) => {
      const type = `<${from(d.leafTypes, r)}>`;
      return `${PREFIXES}SELECT ?feature (?withFeaturePrice / ?withoutFeaturePrice AS ?priceRatio) {
  { SELECT ?feature (AVG(xsd:float(xsd:string(?price))) AS ?withFeaturePrice) {
      ?product a ${type} ; bsbm:productFeature ?feature .
      ?offer bsbm:product ?product ; bsbm:price ?price .
    } GROUP BY ?feature }
  { SELECT ?feature (AVG(xsd:float(xsd:string(?price))) AS ?withoutFeaturePrice) {
      { SELECT DISTINCT ?feature { ?p a ${type} ; bsbm:productFeature ?feature . } }
      ?product a ${type} .
      ?offer bsbm:product ?product ; bsbm:price ?price .
      FILTER NOT EXISTS { ?product bsbm:productFeature ?feature }
    } GROUP BY ?feature }
} ORDER BY DESC(?withFeaturePrice / ?withoutFeaturePrice) ?feature LIMIT 10`;
    },
  },
  {
    name: 'BI 5',
    text: (d, r) => {
      const type = `<${from(d.leafTypes, r)}>`;
      return `${PREFIXES}SELECT ?country ?product ?nrOfReviews ?avgPrice {
  { SELECT ?country (MAX(?nrOfReviews) AS ?maxReviews) {
      { SELECT ?country ?product (COUNT(?review) AS ?nrOfReviews) {
          ?product a ${type} .
          ?review bsbm:reviewFor ?product ; rev:reviewer ?reviewer .
          ?reviewer bsbm:country ?country .
        } GROUP BY ?country ?product }
    } GROUP BY ?country }
  { SELECT ?product (AVG(xsd:float(xsd:string(?price))) AS ?avgPrice) {
      ?product a ${type} .
      ?offer bsbm:product ?product ; bsbm:price ?price .
    } GROUP BY ?product }
  { SELECT ?country ?product (COUNT(?review) AS ?nrOfReviews) {
      ?product a ${type} .
      ?review bsbm:reviewFor ?product ; rev:reviewer ?reviewer .
      ?reviewer bsbm:country ?country .
    } GROUP BY ?country ?product }
  FILTER (?nrOfReviews = ?maxReviews)
} ORDER BY DESC(?nrOfReviews) ?country ?product`;
    },
  },
  {
    name: 'BI 6',
    text: (d, r) => {
      const producer = `<${from(d.producers, r)}>`;
      const score = `{ ?review bsbm:rating1 ?score . } UNION { ?review bsbm:rating2 ?score . }
      UNION { ?review bsbm:rating3 ?score . } UNION { ?review bsbm:rating4 ?score . }`;
      return `${PREFIXES}SELECT ?reviewer (AVG(xsd:float(?score)) AS ?reviewerAvgScore) {
  { SELECT (AVG(xsd:float(?score)) AS ?avgScore) {
      ?product bsbm:producer ${producer} .
      ?review bsbm:reviewFor ?product .
      ${score}
    } }
  ?product bsbm:producer ${producer} .
  ?review bsbm:reviewFor ?product .
  ?review rev:reviewer ?reviewer .
  ${score}
} GROUP BY ?reviewer HAVING (AVG(xsd:float(?score)) > MIN(?avgScore) * 1.5)`;
    },
  },
  {
    name: 'BI 7',
    text: (d, r) => `${PREFIXES}SELECT ?product (COUNT(?offer) AS ?offers) (MIN(xsd:float(xsd:string(?price))) AS ?cheapest) {
  ?product a <${from(d.leafTypes, r)}> .
  ?offer bsbm:product ?product ; bsbm:vendor ?vendor ; bsbm:price ?price ; bsbm:validTo ?validTo .
  ?vendor bsbm:country <${from(d.countries, r)}> .
  FILTER (?validTo > ${dateTime(r)})
} GROUP BY ?product ORDER BY DESC(?offers) ?product LIMIT 10`,
  },
  {
    name: 'BI 8',
    text: (d, r) => {
      const type = `<${from(d.leafTypes, r)}>`;
      return `${PREFIXES}SELECT ?vendor (xsd:float(?belowAverage) / ?offerCount AS ?cheapShare) {
  { SELECT ?vendor (COUNT(?offer) AS ?offerCount) {
      ?product a ${type} .
      ?offer bsbm:product ?product ; bsbm:vendor ?vendor .
    } GROUP BY ?vendor }
  { SELECT ?vendor (COUNT(?offer) AS ?belowAverage) {
      { SELECT ?product (AVG(xsd:float(xsd:string(?price))) AS ?avgPrice) {
          ?product a ${type} .
          ?offer bsbm:product ?product ; bsbm:price ?price .
        } GROUP BY ?product }
      ?offer bsbm:product ?product ; bsbm:vendor ?vendor ; bsbm:price ?price .
      FILTER (xsd:float(xsd:string(?price)) < ?avgPrice)
    } GROUP BY ?vendor }
} ORDER BY DESC(xsd:float(?belowAverage) / ?offerCount) ?vendor LIMIT 10`;
    },
  },
];
