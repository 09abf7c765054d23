import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config.js';
import { createLogger } from '../util/logger.js';
import { EXIT_START_UP_MISTAKE } from './startup.js';

/** A worker that dies sooner than this after its start counts as crashing in a loop. */
const STABLE_MS = 10_000;
const MAX_BACKOFF_MS = 5_000;

/**
 * The primary process: starts `config.workers` service processes sharing the listening socket,
 * and restarts any that dies (logged, and counted in every worker's `worker_restarts_total`),
 * backing off while they keep crashing. SIGTERM/SIGINT stop the workers gracefully, then itself.
 */
export function supervise(config: Config): void {
  const log = createLogger(config.log_level).child({ role: 'supervisor' });
  const started = new Map<Worker, number>();
  let restarts = 0;
  let rapidFailures = 0;
  let stopping = false;

  const fork = () => {
    // A new worker learns the count from its environment; running ones by message.
    const worker = cluster.fork({ WIKISTORE_WORKER_RESTARTS: String(restarts) });
    started.set(worker, Date.now());
  };

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (started.get(worker) ?? 0);
    started.delete(worker);
    if (code === EXIT_START_UP_MISTAKE && !stopping) {
      // The worker said why (a port in use, storage unreachable): starting it again would fail the same way.
      stopping = true;
      for (const w of started.keys()) w.process.kill('SIGTERM');
      process.exit(EXIT_START_UP_MISTAKE);
    }
    if (stopping) {
      if (started.size === 0) {
        log.info('every worker has stopped');
        process.exit(0);
      }
      return;
    }
    restarts++;
    rapidFailures = lived < STABLE_MS ? rapidFailures + 1 : 0;
    const delay = rapidFailures === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 100 * 2 ** (rapidFailures - 1));
    log.error({ pid: worker.process.pid, code, signal, lived_ms: lived, restarts, restart_in_ms: delay }, 'worker died; restarting it');
    setTimeout(() => {
      fork();
      for (const w of Object.values(cluster.workers ?? {})) w?.isConnected() && w.send({ restarts });
    }, delay);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info({ signal, workers: started.size }, 'stopping the workers');
      if (started.size === 0) process.exit(0);
      for (const worker of started.keys()) worker.process.kill('SIGTERM');
    });
  }

  log.info({ workers: config.workers }, 'starting workers');
  for (let i = 0; i < config.workers; i++) fork();
}
