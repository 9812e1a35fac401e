// The part of autocannon's programmatic API the load benchmark uses (the package ships no types).

declare module 'autocannon' {
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    /** Requests per second over all connections (a fixed pace); default as fast as possible. */
    overallRate?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    /** One request description per request in turn; setupRequest may rewrite it each time. */
    requests?: RequestSpec[];
  }
  interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: RequestSpec) => RequestSpec;
  }
  interface Result {
    requests: { average: number; total: number };
    non2xx: number;
    errors: number;
    timeouts: number;
    duration: number;
  }
  interface Instance extends PromiseLike<Result> {
    on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): this;
    stop(): void;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
