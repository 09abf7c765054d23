import cluster from 'node:cluster';
import { loadConfig, type Config } from './config.js';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
// With workers, this process only supervises; the service runs in the workers it starts.
if (config.workers > 0 && cluster.isPrimary) {
  (await import('./supervisor.js')).supervise(config);
} else {
  await (await import('./serve.js')).serve(config);
}
