import type { Config } from '../config.js';

/**
 * Start-up failures an operator fixes in the config or on the machine: one line naming what to
 * change, and this exit code, which tells a supervisor not to start the worker again (it would
 * fail the same way forever). (EX_CONFIG of sysexits.h.)
 */
export const EXIT_START_UP_MISTAKE = 78;

/** Errors with a system or driver code (node's ErrnoException, SQLite's). */
const codeOf = (err: unknown) => String((err as { code?: unknown })?.code ?? '');

/** The one line for a failure to listen, or undefined if it is not one an operator can fix so. */
export function listenProblem(err: unknown, config: Config): string | undefined {
  const { host, port } = config.listen;
  switch (codeOf(err)) {
    case 'EADDRINUSE':
      return `Port ${port} on ${host} is in use: stop what listens there, or choose another port with listen.port (or PORT).`;
    case 'EACCES':
      return `Not allowed to listen on port ${port}: choose a port above 1023 with listen.port (or PORT).`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return `${host} is not an address of this machine: set listen.host (or HOST).`;
    default:
      return undefined;
  }
}

/** Storage that could not be reached: worth waiting for (a database starting beside the service). */
export function isUnreachable(err: unknown): boolean {
  const code = codeOf(err);
  const name = (err as Error)?.name ?? '';
  return ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P03'].includes(code) || name === 'NoHostAvailableError' || (err as { kind?: string })?.kind === 'unavailable';
}

/** The one line for storage that cannot be opened or reached. */
export function storageProblem(err: unknown, config: Config): string | undefined {
  const storage = config.storage;
  const reason = (err as Error)?.message?.split('\n', 1)[0] ?? String(err);
  if (storage.backend === 'sqlite' && /^(EACCES|EROFS|ENOENT|ENOTDIR|EPERM|SQLITE_CANTOPEN|SQLITE_READONLY)/.test(codeOf(err))) {
    return `Cannot write the SQLite database ${storage.path} (${reason}): make its folder writable, or set DATA_DIR (or storage.path).`;
  }
  if (isUnreachable(err)) {
    const where = storage.backend === 'postgres' ? `PostgreSQL at ${storage.url.replace(/\/\/[^@/]*@/, '//')}` : storage.backend === 'cassandra' ? `Cassandra at ${storage.contact_points.join(', ')}` : storage.backend;
    return `Storage is not reachable: ${where} (${reason}): start it, or correct storage in the config.`;
  }
  return undefined;
}
