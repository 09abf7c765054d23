import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SendWatch } from '../../../src/http/send-watch.js';

/**
 * A server that writes `bytes` to one connection and watches it, the client reading as `reader`
 * says: when the server's end closed, and what the client had received by then.
 */
async function exchange(watch: SendWatch, bytes: number, reader: (socket: net.Socket) => void): Promise<{ closedAfterMs: number; received: number }> {
  let client: net.Socket | undefined;
  let received = 0;
  const started = Date.now();
  const server = net.createServer();
  const closed = new Promise<number>((resolve) => {
    server.on('connection', (socket) => {
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Date.now() - started));
      socket.write(Buffer.alloc(bytes, 120));
      watch.watch(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    client.on('data', (chunk: Buffer) => (received += chunk.length));
    client.on('error', () => undefined);
    reader(client);
    // (A client that reads nothing never sees the server's end close: what it did not read stays in its kernel buffer.)
    return { closedAfterMs: await closed, received };
  } finally {
    client?.destroy();
    server.close();
  }
}

describe('answers no client takes', () => {
  // More than the kernel's buffers on both sides of a loopback connection hold.
  const BIG = 48 * 1024 * 1024;

  it('closes a connection whose client takes none of what waits for it', async () => {
    let cuts = 0;
    const watch = new SendWatch(300, () => cuts++);
    const { closedAfterMs, received } = await exchange(watch, BIG, (client) => client.pause());
    assert.equal(cuts, 1);
    assert.ok(closedAfterMs >= 300 && closedAfterMs < 5000, `closed after ${closedAfterMs} ms`);
    assert.equal(received, 0);
    assert.equal(watch.size, 0);
  });

  it('leaves a slow client that takes some now and then, however long it takes in all, and forgets one that took it all', async () => {
    let cuts = 0;
    const watch = new SendWatch(1000, () => cuts++);
    // A connection as the watch sees it: what node holds, and what libuv holds for the kernel.
    const slow = { destroyed: false, writableLength: 1000, _handle: { writeQueueSize: 900 }, destroy: () => assert.fail('a slow client cut') };
    watch.watch(slow as unknown as net.Socket);
    const started = Date.now();
    // The client takes a little every 100 ms (libuv's queue goes down), for three timeouts and more
    // (a timeout ten steps long: a loaded machine's late timers do not make a stall of a step).
    while (Date.now() - started < 3500) {
      await sleep(100);
      slow._handle.writeQueueSize -= 10;
    }
    assert.equal(watch.size, 1, 'still watched: bytes still wait');
    slow.writableLength = 0;
    await sleep(1300);
    assert.equal(watch.size, 0, 'forgotten once nothing waits');
    assert.equal(cuts, 0);
  });
});
