import { createApp } from './app.js';
import type { Config } from './config.js';

/** Runs the service in this process until SIGTERM or SIGINT, then finishes in-flight work and exits. */
export async function serve(config: Config): Promise<void> {
  const app = await createApp(config);
  app.metrics.workerRestarts.set(Number(process.env.WIKISTORE_WORKER_RESTARTS ?? 0));
  process.on('message', (message: { restarts?: number }) => {
    if (typeof message?.restarts === 'number') app.metrics.workerRestarts.set(message.restarts);
  });
  const address = await app.listen();
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
