import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HttpError } from '../../../src/util/errors.js';
import { Circuit } from '../../../src/upstream/circuit.js';

describe('the circuit of a wiki', () => {
  it('opens after requests in a row that stalled or found the wiki unreachable, and then fails at once', async () => {
    let probed = 0;
    const circuit = new Circuit({ threshold: 2, probeIntervalMs: 60_000, probe: async () => void probed++ });
    const unreachable = () => Promise.reject(new HttpError(503, 'upstream-unavailable', 'refused'));
    const timedOut = () => Promise.reject(new HttpError(504, 'upstream-timeout', 'slow'));
    await assert.rejects(circuit.run(unreachable));
    assert.equal(circuit.isOpen, false);
    await assert.rejects(circuit.run(timedOut));
    assert.equal(circuit.isOpen, true);
    let asked = false;
    await assert.rejects(circuit.run(async () => (asked = true)), (e: unknown) => e instanceof HttpError && e.status === 503);
    assert.equal(asked, false, 'an open circuit asks nothing of the wiki');
  });

  it('does not open for a wiki that answers, even with errors', async () => {
    const circuit = new Circuit({ threshold: 2, probeIntervalMs: 60_000, probe: async () => undefined });
    for (let i = 0; i < 3; i++) {
      await assert.rejects(circuit.run(() => Promise.reject(new HttpError(503, 'upstream-unavailable', 'refused'))));
      await assert.rejects(circuit.run(() => Promise.reject(new HttpError(502, 'upstream-error', 'a 500'))));
    }
    assert.equal(circuit.isOpen, false);
  });

  it("is not opened by background requests' stalls, which an open circuit does not send either", async () => {
    const circuit = new Circuit({ threshold: 2, probeIntervalMs: 60_000, probe: async () => undefined });
    const timedOut = () => Promise.reject(new HttpError(504, 'upstream-timeout', 'slow'));
    for (let i = 0; i < 3; i++) await assert.rejects(circuit.run(timedOut, { counts: false }));
    assert.equal(circuit.isOpen, false, 'stalls nobody waited for');
    await assert.rejects(circuit.run(timedOut));
    assert.equal(circuit.isOpen, false, 'one reader stalled: the count starts from it');
    await assert.rejects(circuit.run(timedOut));
    assert.equal(circuit.isOpen, true);
    let asked = false;
    await assert.rejects(circuit.run(async () => (asked = true), { counts: false }));
    assert.equal(asked, false);
  });
});
