import cluster from 'node:cluster';
import { loadConfig, type Config } from '../config.js';

// The service takes its settings from its config file and the environment, never from flags: one
// given is a mistake to report, not to ignore.
if (process.argv.length > 2) {
  console.error(`Unknown argument '${process.argv[2]}': the service is configured by config.yaml (or CONFIG=file) and the environment (docs/operating.md).`);
  process.exit(2);
}
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
