// Drops the keyspaces an earlier test run left on a Cassandra node that outlived it: suites with a
// fixed domain (the page API's wiki.test) must start from empty tables, as on a fresh machine.
// usage: node scripts/drop-test-keyspaces.mjs HOST PREFIX
import cassandra from 'cassandra-driver';

const [host, prefix] = process.argv.slice(2);
if (!host || !/^\w+$/.test(prefix ?? '')) throw new Error('usage: drop-test-keyspaces.mjs HOST PREFIX');
const client = new cassandra.Client({ contactPoints: [host], localDataCenter: 'datacenter1' });
await client.connect();
try {
  const { rows } = await client.execute('SELECT keyspace_name FROM system_schema.keyspaces');
  for (const { keyspace_name: name } of rows) {
    if (name.startsWith(`${prefix}_`)) await client.execute(`DROP KEYSPACE IF EXISTS "${name}"`);
  }
} finally {
  await client.shutdown();
}
