// Reads one sample out of a Prometheus scrape.

/** The number behind `name{labels}` in a scrape's text (0 when absent). */
export function scrapeSample(scrape: string, name: string, labels: string): number {
  const line = scrape.split('\n').find((each) => each.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}
