#!/usr/bin/env bash
# Apache Cassandra on loopback for the tests, from Maven Central (no Debian package exists):
#   scripts/cassandra.sh start [NODES]   start NODES nodes (default 1) on 127.0.0.1..127.0.0.N, port 9042
#   scripts/cassandra.sh stop            stop them
#   scripts/cassandra.sh status          exit 0 if node 1 answers on its native port
#   scripts/cassandra.sh kill N          kill -9 node N (the multi-node test's failure)
#   scripts/cassandra.sh restart-node N  start node N again
#   scripts/cassandra.sh ring N          wait until node 1 sees N nodes up and normal
#   scripts/cassandra.sh nodetool N ARGS  run nodetool against node N (e.g. repair)
# Everything lives in .cassandra/ (jars, config, data, logs); CASSANDRA_ROOT puts a cluster's
# nodes elsewhere (the jars stay shared). Idempotent: start on a running node does nothing. See scripts/cassandra/NOTES.md for what running Cassandra this way needs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
fail() { log "$*"; exit 1; }

ROOT="${CASSANDRA_ROOT:-$PWD/.cassandra}"
LIB="$PWD/.cassandra/lib"
VERSION_POM="$PWD/scripts/cassandra/pom.xml"
HEAP="${CASSANDRA_HEAP:-512m}"

fetch_jars() {
  command -v java >/dev/null || apt_install openjdk-17-jre-headless
  if [ -f "$LIB/.complete" ] && [ "$LIB/.complete" -nt "$VERSION_POM" ]; then return; fi
  command -v mvn >/dev/null || apt_install maven
  log "fetching Cassandra's jars from Maven Central (once)"
  rm -rf "$LIB"
  mvn -q -B -f "$VERSION_POM" dependency:copy-dependencies -DoutputDirectory="$LIB" -DincludeScope=runtime >&2
  touch "$LIB/.complete"
}

node_dir() { echo "$ROOT/node$1"; }
node_ip() { echo "127.0.0.$1"; }

# How a node takes its place. Alone, tokens allocated for one replica. In a cluster, the nodes
# after the first join an empty ring at once, without bootstrapping (nothing to stream), on random
# tokens: allocated, two nodes joining together would compute the same ones from the same ring,
# and with three replicas on three nodes every node holds all data whatever its tokens.
allocation() {
  if [ "$2" -eq 1 ]; then echo 'allocate_tokens_for_local_replication_factor: 1'
  elif [ "$1" -gt 1 ]; then echo 'auto_bootstrap: false'
  fi
}

write_config() {
  local n=$1 nodes=$2 dir ip
  dir=$(node_dir "$n"); ip=$(node_ip "$n")
  mkdir -p "$dir/conf" "$dir/data" "$dir/commitlog" "$dir/saved_caches" "$dir/hints" "$dir/cdc" "$dir/logs"
  cat > "$dir/conf/cassandra.yaml" <<YAML
cluster_name: wikistore-test
num_tokens: 16
$(allocation "$n" "$nodes")
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:7000"
listen_address: $ip
rpc_address: $ip
storage_port: 7000
native_transport_port: 9042
start_native_transport: true
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
role_manager: CassandraRoleManager
network_authorizer: AllowAllNetworkAuthorizer
data_file_directories: ["$dir/data"]
commitlog_directory: $dir/commitlog
saved_caches_directory: $dir/saved_caches
hints_directory: $dir/hints
cdc_raw_directory: $dir/cdc
commitlog_sync: periodic
commitlog_sync_period: 10000ms
# The default: a mutation may be half a segment (16 MiB), as large as max_body_bytes.
commitlog_segment_size: 32MiB
memtable_heap_space: 64MiB
memtable_offheap_space: 64MiB
concurrent_reads: 8
concurrent_writes: 8
concurrent_counter_writes: 8
disk_failure_policy: stop
commit_failure_policy: stop
key_cache_size: 8MiB
# Tests create and drop keyspaces often: no snapshot of each dropped table.
auto_snapshot: false
YAML
  cat > "$dir/conf/logback.xml" <<XML
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>$dir/logs/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
XML
}

# The module access Cassandra 5.0 needs on Java 17 (its conf/jvm17-server.options); its tools
# (nodetool) need it too.
MODULE_OPTS=(
  -Djava.net.preferIPv4Stack=true
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
  --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
  --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
  --add-exports java.sql/java.sql=ALL-UNNAMED
  --add-exports java.base/java.lang.ref=ALL-UNNAMED
  --add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
  --add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
  --add-exports jdk.attach/sun.tools.attach=ALL-UNNAMED
  --add-opens java.base/java.lang.module=ALL-UNNAMED
  --add-opens java.base/jdk.internal.loader=ALL-UNNAMED
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
  --add-opens java.base/jdk.internal.math=ALL-UNNAMED
  --add-opens java.base/jdk.internal.module=ALL-UNNAMED
  --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
  --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens java.base/java.io=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
  --add-opens java.base/java.lang=ALL-UNNAMED
  --add-opens java.base/java.util=ALL-UNNAMED
  -Dio.netty.tryReflectionSetAccessible=true
  -Dio.netty.allocator.useCacheForAllThreads=true
  -Dio.netty.allocator.maxOrder=11
)
# The JIT's first tier only: a test node lives minutes, and the second tier's compiling of
# Cassandra cost more CPU than its faster code saved (the storage suite on one node: 22 s of the
# node's CPU with both tiers, 11 s with the first; the second time 15 s against 9 s).
JVM_OPTS=(
  -XX:TieredStopAtLevel=1 -Xms"$HEAP" -Xmx"$HEAP" -Xss256k -XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxTenuringThreshold=1 -XX:G1HeapRegionSize=16m
  -XX:+HeapDumpOnOutOfMemoryError -Djdk.attach.allowAttachSelf=true "${MODULE_OPTS[@]}"
)

port_open() { (exec 3<>"/dev/tcp/$1/9042") 2>/dev/null; }

start_node() {
  local n=$1 nodes=$2 dir ip
  dir=$(node_dir "$n"); ip=$(node_ip "$n")
  if port_open "$ip"; then return; fi
  write_config "$n" "$nodes"
  # The seed starts alone and needs no ring delay; a joining node bootstraps only after it has
  # heard the seed's gossip within that delay (1 s was seen to fail on a busy machine).
  local ring_delay=$(( n == 1 ? 1000 : 10000 ))
  # A node alone (the suite's, never killed) does not flush its schema tables to disk on every
  # schema change, as Cassandra's own tests run: the suite makes thousands of tables. A cluster's
  # nodes are killed and restarted by its tests, and keep the flush.
  local schema_flush=()
  if [ "$nodes" -eq 1 ]; then schema_flush=(-Dcassandra.unsafesystem=true -Dcassandra.test.flush_local_schema_changes=false); fi
  log "starting Cassandra node $n on $ip"
  # JMX stays on loopback, one port per node.
  setsid java "${JVM_OPTS[@]}" \
    -Dcassandra.config="file://$dir/conf/cassandra.yaml" -Dlogback.configurationFile="$dir/conf/logback.xml" \
    -Dcassandra.storagedir="$dir" -Dcassandra.logdir="$dir/logs" -Dcassandra-foreground=yes \
    -Dcassandra.jmx.local.port=$((7199 + n)) -Dcassandra.skip_wait_for_gossip_to_settle=0 \
    -Dcassandra.ring_delay_ms="$ring_delay" "${schema_flush[@]}" \
    -cp "$dir/conf:$LIB/*" org.apache.cassandra.service.CassandraDaemon >"$dir/logs/stdout.log" 2>&1 &
  echo $! > "$dir/pid"
}

wait_node() {
  local n=$1 ip
  ip=$(node_ip "$n")
  for _ in $(seq 1 240); do
    if port_open "$ip"; then return; fi
    if ! kill -0 "$(cat "$(node_dir "$n")/pid")" 2>/dev/null; then
      tail -n 30 "$(node_dir "$n")/logs/stdout.log" "$(node_dir "$n")/logs/system.log" >&2 || true
      fail "Cassandra node $n exited while starting"
    fi
    sleep 0.5
  done
  fail "Cassandra node $n did not open its native port within 2 minutes"
}

# Until another running node sees node N up and normal (UN): a node restarted opens its port
# before the others' failure detectors mark it up, and a node killed then would leave too few for
# QUORUM. A node with no other running beside it has nothing to wait for.
wait_seen() {
  local n=$1 ip dir other observer=""
  ip=$(node_ip "$n")
  for dir in "$ROOT"/node*; do
    other=${dir##*node}
    if [ "$other" != "$n" ] && kill -0 "$(cat "$dir/pid" 2>/dev/null)" 2>/dev/null; then observer=$other; break; fi
  done
  [ -n "$observer" ] || return 0
  for _ in $(seq 1 60); do
    if java "${MODULE_OPTS[@]}" -cp "$LIB/*" org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p $((7199 + observer)) status 2>/dev/null | grep -Eq "^UN +${ip//./\\.} "; then return; fi
    sleep 2
  done
  fail "Cassandra: node $observer did not see node $n up within 2 minutes"
}

# Until every node sees every node up and normal (UN): a node's native port opens before gossip
# tells the others, and a client connecting then, or a node coordinating a QUORUM request (it
# counts the replicas it sees alive), would see one down. Node 1's view alone was not enough: node
# 2 was seen answering "2 required but only 1 alive" after node 1 saw all three.
wait_ring() {
  local nodes=$1 n up seen
  for _ in $(seq 1 60); do
    seen=0
    for n in $(seq 1 "$nodes"); do
      up=$(java "${MODULE_OPTS[@]}" -cp "$LIB/*" org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p $((7199 + n)) status 2>/dev/null | grep -c '^UN' || true)
      if [ "$up" -ge "$nodes" ]; then seen=$((seen + 1)); else break; fi
    done
    if [ "$seen" -eq "$nodes" ]; then return; fi
    sleep 2
  done
  fail "Cassandra: the $nodes nodes did not all see each other up within 2 minutes"
}

case "${1:-}" in
  start)
    nodes=${2:-1}
    fetch_jars
    # The seed first; the others then join together (see `allocation`).
    start_node 1 "$nodes"; wait_node 1
    for n in $(seq 2 "$nodes"); do start_node "$n" "$nodes"; done
    for n in $(seq 2 "$nodes"); do wait_node "$n"; done
    if [ "$nodes" -gt 1 ]; then wait_ring "$nodes"; fi
    ;;
  stop)
    # Waits for each to exit: a node still shutting down holds its ports.
    for pidfile in "$ROOT"/node*/pid; do
      [ -f "$pidfile" ] || continue
      pid=$(cat "$pidfile")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$pidfile"
    done
    ;;
  status)
    port_open 127.0.0.1
    ;;
  kill)
    kill -9 "$(cat "$(node_dir "$2")/pid")"
    ;;
  ring)
    wait_ring "$2"
    ;;
  restart-node)
    nodes=$(find "$ROOT" -maxdepth 1 -name 'node*' -type d | wc -l)
    start_node "$2" "$nodes"; wait_node "$2"; wait_seen "$2"
    ;;
  nodetool)
    n=$2; shift 2
    java "${MODULE_OPTS[@]}" -cp "$LIB/*" org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p $((7199 + n)) "$@"
    ;;
  *)
    echo "usage: $0 start [NODES] | stop | status | kill N | restart-node N | ring N | nodetool N ARGS" >&2
    exit 2
    ;;
esac
