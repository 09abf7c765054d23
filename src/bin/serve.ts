import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApp, type App } from '../app.js';
import { EXIT_START_UP_MISTAKE, isUnreachable, listenProblem, storageProblem } from './startup.js';
import type { Config } from '../config.js';

/** Attempts at reaching storage at start before giving up (one a second: a database starting beside the service). */
const STORAGE_ATTEMPTS = 5;

/** Stops at start with one line an operator can act on, and the exit code a supervisor does not retry. */
function giveUp(line: string): never {
  console.error(line);
  process.exit(EXIT_START_UP_MISTAKE);
}

/** The app, storage reached: waited for a few seconds while it is unreachable, then given up on. */
async function createWhenStorageAnswers(config: Config): Promise<App> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createApp(config);
    } catch (err) {
      const problem = storageProblem(err, config);
      if (!problem) throw err;
      if (!isUnreachable(err) || attempt >= STORAGE_ATTEMPTS) giveUp(problem);
      console.error(`${problem} Trying again (${attempt} of ${STORAGE_ATTEMPTS}).`);
      await sleep(1000);
    }
  }
}

/** Runs the service in this process until SIGTERM or SIGINT, then finishes in-flight work and exits. */
export async function serve(config: Config): Promise<void> {
  const app = await createWhenStorageAnswers(config);
  app.metrics.workerRestarts.set(Number(process.env.WIKISTORE_WORKER_RESTARTS ?? 0));
  process.on('message', (message: { restarts?: number }) => {
    if (typeof message?.restarts === 'number') app.metrics.workerRestarts.set(message.restarts);
  });
  let address: AddressInfo;
  try {
    address = await app.listen();
  } catch (err) {
    const problem = listenProblem(err, config);
    if (!problem) throw err;
    await app.close().catch(() => undefined);
    giveUp(problem);
  }
  app.log.info({ host: address.address, port: address.port, storage: config.storage.backend, wikis: Object.keys(config.wikis) }, 'listening');

  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      app.log.info({ signal }, 'shutting down: finishing in-flight requests');
      app.close().then(
        () => process.exit(0),
        (err) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}
