// The one line a listener that cannot open gives: the key that chose its address, what went wrong there, and the fix.

import { ConfigError } from '../config/read-config.js';

/** Where a listener listens, and the configuration keys that chose it. */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
  /** `port` or `metrics.port`. */
  readonly portKey: string;
  /** `host` or `metrics.host`. */
  readonly hostKey: string;
}

/**
 * Runs `listen`; a failure the operator can fix in the configuration (a port in use or not
 * permitted, an address this host does not have) becomes a ConfigError naming the key.
 * Node's own words (`listen EADDRINUSE: address already in use 0.0.0.0:8080`) said neither
 * which listener, the query port or the metrics port, nor what to change.
 */
export async function listenOrExplain<T>(address: ListenAddress, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    throw listenProblem(error, address) ?? error;
  }
}

/** The ConfigError for a listen error, or undefined for one the configuration cannot cause. */
export function listenProblem(error: unknown, { host, port, portKey, hostKey }: ListenAddress): ConfigError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const at = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  // PORT overrides the configuration's port: say so where it may be the one that chose it.
  const portSetting = portKey === 'port' ? 'port (or the environment variable PORT)' : portKey;
  switch (code) {
    case 'EADDRINUSE':
      return new ConfigError(
        `config ${portKey}: ${at} is already in use (EADDRINUSE) (stop what listens there, or set ${portSetting} to a free port)`,
      );
    case 'EACCES':
    case 'EPERM':
      return new ConfigError(
        `config ${portKey}: listening on ${at} is not permitted (${code}) (set ${portSetting} to a port from 1024, or let the guard's user bind low ports)`,
      );
    case 'EADDRNOTAVAIL':
      return new ConfigError(
        `config ${hostKey}: ${host} is not an address of this host (EADDRNOTAVAIL) (give one of its addresses, 127.0.0.1, or 0.0.0.0 for every interface)`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(
        `config ${hostKey}: the name ${host} does not resolve (${code}) (give an address of this host, or a name that resolves to one)`,
      );
    default:
      return undefined;
  }
}
