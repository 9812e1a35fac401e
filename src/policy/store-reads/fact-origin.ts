// The name a fact source's triples go by in logs, load errors and `check --why`: a module of its own, so the policy worker, which names them, does not load the HTTP client that fetches them.

/** The origin of a fact from a source, as logs and `check --why` name it. */
export function factOrigin(name: string): string {
  return `facts:${name}`;
}
