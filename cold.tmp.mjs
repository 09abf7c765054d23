import { startService } from './dist/bench/service.js';
import { coldMisses } from './dist/bench/scenarios/cold-miss.js';
const service = await startService('sqlite', 'http://127.0.0.1:8089');
try {
  for (const r of await coldMisses(service.base, 'http://127.0.0.1:8089')) console.log(r.kind, 'svc', r.serviceMs.toFixed(1), 'floor', r.floorMs.toFixed(1), 'floorRatio', r.floorRatio.toFixed(2), 'bundle ratio', r.ratio.toFixed(2), r.byTitle ? `byTitle ${r.byTitle.ms.toFixed(1)} ${r.byTitle.ratio.toFixed(2)}` : '');
} finally { await service.stop(); }
