// Generates data in the shape of the Berlin SPARQL Benchmark (products, offers, reviews) in six graphs, and the materialised views of the bench's callers.

import { seededRandom } from './bsbm-mix.js';

export const BSBM = 'http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/';
export const INST = 'http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const RDFS = 'http://www.w3.org/2000/01/rdf-schema#';
const DC = 'http://purl.org/dc/elements/1.1/';
const REV = 'http://purl.org/stuff/rev#';
const FOAF = 'http://xmlns.com/foaf/0.1/';
const XSD = 'http://www.w3.org/2001/XMLSchema#';
export const COUNTRIES = ['US', 'DE', 'GB', 'JP', 'FR', 'AT', 'RU', 'KR', 'ES', 'CN'].map(
  (code) => `http://downlode.org/rdf/iso-3166/countries#${code}`,
);

/** The six graphs: products, offers and reviews, each in two halves (by producer, vendor and rating site). */
export const GRAPHS = ['products-1', 'products-2', 'offers-1', 'offers-2', 'reviews-1', 'reviews-2'].map(
  (name) => `http://bsbm.example/graph/${name}`,
);

/** One quad: N-Quads terms (IRIs in angle brackets, literals written out). */
type Quad = readonly [subject: string, predicate: string, object: string, graph: string];

/** What the query mixes draw their constants from. */
export interface BsbmData {
  readonly quads: readonly Quad[];
  readonly products: readonly string[];
  readonly productTypes: readonly string[];
  /** Product types that have products (leaves), with the features their products carry. */
  readonly leafTypes: readonly string[];
  readonly features: readonly string[];
  readonly producers: readonly string[];
  readonly offers: readonly string[];
  readonly reviews: readonly string[];
}

const iri = (value: string): string => `<${value}>`;
const text = (value: string): string => JSON.stringify(value);
const typed = (value: string | number, type: string): string => `"${value}"^^<${type}>`;
const WORDS = 'alarm shiny grey bright heavy compact quiet rapid smooth gentle clever sturdy silent vivid plain modern'.split(' ');

/** A day of 2008 as yyyy-mm-dd, `day` in 0..364. */
function dayOf2008(day: number): string {
  return new Date(Date.UTC(2008, 0, 1 + day)).toISOString().slice(0, 10);
}

/**
 * The data: about `products` x 347 triples (1,330 products: some 460,000), deterministic for a seed.
 * Products and their producers, types and features in the products graphs; offers and vendors in
 * the offers graphs; reviews and reviewers in the reviews graphs.
 */
export function generateBsbmData(products = 1330, seed = 7): BsbmData {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const int = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1));
  const words = (n: number): string => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const quads: Quad[] = [];
  const add = (graph: string, subject: string, predicate: string, object: string): void => {
    quads.push([iri(subject), iri(predicate), object, iri(graph)]);
  };
  const [products1, products2, offers1, offers2, reviews1, reviews2] = GRAPHS as [string, string, string, string, string, string];

  // Product types: a tree of 1 + 6 + 36 + 108 (the leaves carry products).
  const productTypes: string[] = [];
  const leafTypes: string[] = [];
  const typeParent = new Map<string, string>();
  const addType = (parent: string | undefined, depth: number): void => {
    const type = `${INST}ProductType${productTypes.length + 1}`;
    productTypes.push(type);
    add(products1, type, RDF_TYPE, iri(BSBM + 'ProductType'));
    add(products1, type, RDFS + 'label', text(words(2)));
    add(products1, type, RDFS + 'comment', text(words(6)));
    add(products1, type, DC + 'publisher', iri(`${INST}StandardizationInstitution1`));
    add(products1, type, DC + 'date', typed(dayOf2008(int(0, 364)), XSD + 'date'));
    if (parent !== undefined) {
      add(products1, type, RDFS + 'subClassOf', iri(parent));
      typeParent.set(type, parent);
    }
    if (depth === 3) leafTypes.push(type);
    else for (let i = 0; i < (depth === 2 ? 3 : 6); i++) addType(type, depth + 1);
  };
  addType(undefined, 0);

  const features: string[] = [];
  for (let i = 1; i <= 1000; i++) {
    const feature = `${INST}ProductFeature${i}`;
    features.push(feature);
    add(products1, feature, RDF_TYPE, iri(BSBM + 'ProductFeature'));
    add(products1, feature, RDFS + 'label', text(words(2)));
    add(products1, feature, RDFS + 'comment', text(words(10)));
  }
  // Each leaf type draws its products' features from 40 of them, so feature pairs recur.
  const featuresOf = new Map(leafTypes.map((type) => [type, Array.from({ length: 40 }, () => pick(features))]));

  const producerCount = Math.max(2, Math.round(products / 50));
  const producers: string[] = [];
  const productList: string[] = [];
  for (let p = 1; p <= producerCount; p++) {
    const graph = p <= producerCount / 2 ? products1 : products2;
    const base = `${INST}dataFromProducer${p}/`;
    const producer = `${base}Producer${p}`;
    producers.push(producer);
    add(graph, producer, RDF_TYPE, iri(BSBM + 'Producer'));
    add(graph, producer, RDFS + 'label', text(`Producer ${words(1)} ${p}`));
    add(graph, producer, RDFS + 'comment', text(words(6)));
    add(graph, producer, FOAF + 'homepage', iri(`http://www.producer${p}.example/`));
    add(graph, producer, BSBM + 'country', iri(pick(COUNTRIES)));
    add(graph, producer, DC + 'publisher', iri(producer));
    add(graph, producer, DC + 'date', typed(dayOf2008(int(0, 364)), XSD + 'date'));
    for (let n = 0; n < products / producerCount; n++) {
      const product = `${base}Product${productList.length + 1}`;
      productList.push(product);
      const type = pick(leafTypes);
      add(graph, product, RDF_TYPE, iri(BSBM + 'Product'));
      // As BSBM: the product is an instance of its type and of every type above it.
      for (let t: string | undefined = type; t !== undefined; t = typeParent.get(t)) add(graph, product, RDF_TYPE, iri(t));
      add(graph, product, RDFS + 'label', text(words(3)));
      add(graph, product, RDFS + 'comment', text(words(8)));
      add(graph, product, BSBM + 'producer', iri(producer));
      add(graph, product, DC + 'publisher', iri(producer));
      add(graph, product, DC + 'date', typed(dayOf2008(int(0, 364)), XSD + 'date'));
      const own = new Set(Array.from({ length: int(9, 20) }, () => pick(featuresOf.get(type) ?? features)));
      for (const feature of own) add(graph, product, BSBM + 'productFeature', iri(feature));
      for (let k = 1; k <= 6; k++) {
        if (k <= 3 || random() < 0.7) add(graph, product, `${BSBM}productPropertyTextual${k}`, text(words(6)));
        if (k <= 3 || random() < 0.7) add(graph, product, `${BSBM}productPropertyNumeric${k}`, typed(int(1, 2000), XSD + 'integer'));
      }
    }
  }

  const vendorCount = Math.max(2, Math.round(products / 100));
  const offers: string[] = [];
  for (let v = 1; v <= vendorCount; v++) {
    const graph = v <= vendorCount / 2 ? offers1 : offers2;
    const base = `${INST}dataFromVendor${v}/`;
    const vendor = `${base}Vendor${v}`;
    add(graph, vendor, RDF_TYPE, iri(BSBM + 'Vendor'));
    add(graph, vendor, RDFS + 'label', text(`Vendor ${words(1)} ${v}`));
    add(graph, vendor, RDFS + 'comment', text(words(6)));
    add(graph, vendor, FOAF + 'homepage', iri(`http://www.vendor${v}.example/`));
    add(graph, vendor, BSBM + 'country', iri(pick(COUNTRIES)));
    add(graph, vendor, DC + 'publisher', iri(vendor));
    add(graph, vendor, DC + 'date', typed(dayOf2008(int(0, 364)), XSD + 'date'));
    for (let n = 0; n < (20 * products) / vendorCount; n++) {
      const offer = `${base}Offer${offers.length + 1}`;
      offers.push(offer);
      const from = int(0, 300);
      add(graph, offer, RDF_TYPE, iri(BSBM + 'Offer'));
      add(graph, offer, BSBM + 'product', iri(pick(productList)));
      add(graph, offer, BSBM + 'vendor', iri(vendor));
      add(graph, offer, DC + 'publisher', iri(vendor));
      add(graph, offer, BSBM + 'price', typed((int(500, 1_000_000) / 100).toFixed(2), BSBM + 'USD'));
      add(graph, offer, BSBM + 'validFrom', typed(`${dayOf2008(from)}T00:00:00`, XSD + 'dateTime'));
      add(graph, offer, BSBM + 'validTo', typed(`${dayOf2008(from + int(10, 64))}T00:00:00`, XSD + 'dateTime'));
      add(graph, offer, BSBM + 'deliveryDays', typed(int(1, 21), XSD + 'integer'));
      add(graph, offer, BSBM + 'offerWebpage', iri(`http://www.vendor${v}.example/offers/${offers.length}`));
      add(graph, offer, DC + 'date', typed(dayOf2008(int(0, 364)), XSD + 'date'));
    }
  }

  const reviewers: string[][] = [[], []];
  for (let r = 1; r <= products / 2; r++) {
    const site = r % 2;
    const graph = site === 0 ? reviews1 : reviews2;
    const reviewer = `${INST}dataFromRatingSite${site + 1}/Reviewer${r}`;
    reviewers[site]?.push(reviewer);
    add(graph, reviewer, RDF_TYPE, iri(FOAF + 'Person'));
    add(graph, reviewer, FOAF + 'name', text(`${words(1)} ${r}`));
    add(graph, reviewer, FOAF + 'mbox_sha1sum', text(((r * 2654435761) >>> 0).toString(16).padStart(40, '0')));
    add(graph, reviewer, BSBM + 'country', iri(pick(COUNTRIES)));
    add(graph, reviewer, DC + 'publisher', iri(`${INST}dataFromRatingSite${site + 1}/RatingSite${site + 1}`));
    add(graph, reviewer, DC + 'date', typed(dayOf2008(int(0, 364)), XSD + 'date'));
  }
  const reviews: string[] = [];
  for (let n = 0; n < 10 * products; n++) {
    const site = n % 2;
    const graph = site === 0 ? reviews1 : reviews2;
    const review = `${INST}dataFromRatingSite${site + 1}/Review${n + 1}`;
    reviews.push(review);
    add(graph, review, RDF_TYPE, iri(REV + 'Review'));
    add(graph, review, BSBM + 'reviewFor', iri(pick(productList)));
    add(graph, review, REV + 'reviewer', iri(pick(reviewers[site] ?? [])));
    const day = int(0, 364);
    add(graph, review, BSBM + 'reviewDate', typed(`${dayOf2008(day)}T00:00:00`, XSD + 'dateTime'));
    add(graph, review, DC + 'title', text(words(4)));
    add(graph, review, REV + 'text', `${text(words(12))}@${random() < 0.8 ? 'en' : 'de'}`);
    for (let k = 1; k <= 4; k++) if (random() < 0.7) add(graph, review, `${BSBM}rating${k}`, typed(int(1, 10), XSD + 'integer'));
    add(graph, review, DC + 'publisher', iri(`${INST}dataFromRatingSite${site + 1}/RatingSite${site + 1}`));
    add(graph, review, DC + 'date', typed(dayOf2008(day), XSD + 'date'));
  }
  return { quads, products: productList, productTypes, leafTypes, features, producers, offers, reviews };
}

/** A caller of the bench: the graphs granted and the predicates hidden in each. */
export interface BenchCaller {
  readonly name: string;
  readonly graphs: readonly string[];
  readonly hiddenByGraph: ReadonlyMap<string, ReadonlySet<string>>;
  /** The caller whose view this one shares (its extra graphs are empty); absent: a view of its own. */
  readonly viewOf?: string;
}

const HIDDEN = [FOAF + 'mbox_sha1sum', BSBM + 'validFrom', BSBM + 'offerWebpage'];

/** `count` graph IRIs that hold nothing in the lab's data. */
const emptyGraphs = (count: number): string[] => Array.from({ length: count }, (_, i) => `http://bsbm.example/graph/empty-${i + 1}`);

/**
 * All six graphs; half of them; all with hidden predicates; all with a different hidden set per part;
 * then the curve: all six graphs with 6 and 18 empty ones beside them (12 and 24 in FROM), over the
 * same view as all six, so the cost of the list's length shows apart from what the graphs hold.
 */
export const CALLERS: readonly BenchCaller[] = [
  { name: 'all graphs', graphs: GRAPHS, hiddenByGraph: new Map() },
  { name: 'half', graphs: [GRAPHS[0], GRAPHS[2], GRAPHS[4]] as string[], hiddenByGraph: new Map() },
  { name: 'hidden paths', graphs: GRAPHS, hiddenByGraph: new Map(GRAPHS.map((graph) => [graph, new Set(HIDDEN)])) },
  {
    name: 'mixed hidden sets',
    graphs: GRAPHS,
    hiddenByGraph: new Map([
      [GRAPHS[2] as string, new Set([BSBM + 'validFrom'])],
      [GRAPHS[3] as string, new Set([BSBM + 'validFrom', BSBM + 'offerWebpage'])],
      [GRAPHS[5] as string, new Set([FOAF + 'mbox_sha1sum'])],
    ]),
  },
  { name: '12 graphs (6 empty)', graphs: [...GRAPHS, ...emptyGraphs(6)], hiddenByGraph: new Map(), viewOf: 'all graphs' },
  { name: '24 graphs (18 empty)', graphs: [...GRAPHS, ...emptyGraphs(18)], hiddenByGraph: new Map(), viewOf: 'all graphs' },
];

/** The graph that holds a caller's materialised view: its granted graphs merged, hidden triples left out. */
export function viewGraph(caller: BenchCaller): string {
  return `urn:x-bench:view:${(caller.viewOf ?? caller.name).replace(/\W+/g, '-')}`;
}

/**
 * N-Quads of the data (unless `withData` is false) and of the views of `callers`. No triple stands in
 * two graphs of the data (each subject is written into one), so a view is the granted graphs' quads
 * without their hidden ones.
 */
export function writeNQuads(data: BsbmData, callers: readonly BenchCaller[] = CALLERS, withData = true): string {
  const lines: string[] = withData ? data.quads.map(([s, p, o, g]) => `${s} ${p} ${o} ${g} .`) : [];
  for (const caller of callers) {
    if (caller.viewOf !== undefined) continue;
    const view = iri(viewGraph(caller));
    const granted = new Set(caller.graphs.map(iri));
    for (const [s, p, o, g] of data.quads) {
      if (!granted.has(g) || caller.hiddenByGraph.get(g.slice(1, -1))?.has(p.slice(1, -1))) continue;
      lines.push(`${s} ${p} ${o} ${view} .`);
    }
  }
  return lines.join('\n') + '\n';
}
