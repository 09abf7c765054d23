import type cassandra from 'cassandra-driver';
import { checked, type StorageHealth } from '../table-storage.js';

export interface NodeCounts {
  up: number;
  down: number;
}
export type NodeListener = (node: string, up: boolean, counts: NodeCounts) => void;

/** A read of the node's own system table, and which nodes the driver sees down (quorum may still hold). */
export function clusterHealth(client: cassandra.Client, timeoutMs: number): Promise<StorageHealth> {
  return checked(timeoutMs, async () => {
    await client.execute('SELECT release_version FROM system.local', [], { prepare: true });
    const hosts = client.hosts.values();
    const down = hosts.filter((h) => !h.isUp()).map((h) => h.address);
    const detail = { nodes: hosts.length, down };
    return down.length ? { status: 'degraded', detail } : { status: 'ok', detail };
  });
}

/** Tells `listener` when a node goes down or comes back; answers how many are up now. */
export function watchNodes(client: cassandra.Client, listener: NodeListener): NodeCounts {
  const counts = () => {
    const hosts = client.hosts.values();
    const up = hosts.filter((h) => h.isUp()).length;
    return { up, down: hosts.length - up };
  };
  client.on('hostUp', (host: { address: string }) => listener(host.address, true, counts()));
  client.on('hostDown', (host: { address: string }) => listener(host.address, false, counts()));
  return counts();
}
