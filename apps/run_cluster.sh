#!/usr/bin/env bash
# ./run cluster: a cluster on this machine to watch heal itself. A PostgreSQL
# server of its own (initdb under demo-data/cluster-pg, loopback only) and
# three matchmakerd nodes (a, b, c) sharing it through leases, with demo
# players, queries and session tickets. The session queues run in three
# partitions (sessions.partitions), so they spread over the nodes too: each
# dashboard's Cluster panel lists which node runs each queue. Kill a node
# (kill -9 PID) and watch the others take its shards and queues over on any
# node's /api/cluster.
# Ctrl-C stops the nodes, then the database. Flags go to every node.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/pg_ctl" ] || { echo "run cluster: PostgreSQL's server is not installed" >&2; exit 1; }
data=$PWD/demo-data/cluster-pg
port=${MM_CLUSTER_PG_PORT:-15432}  # below the ephemeral ports: no client socket holds it
as_pg=()
# PostgreSQL refuses to run as root: as root, it runs as Debian's postgres user.
[ "$(id -u)" -eq 0 ] && as_pg=(runuser -u postgres --)

mkdir -p demo-data
if [ ! -f "$data/PG_VERSION" ]; then
  mkdir -p "$data"
  [ "$(id -u)" -eq 0 ] && chown postgres "$data"
  "${as_pg[@]}" "$bin/initdb" -D "$data" -U matchmaker --auth=trust >/dev/null
fi
"${as_pg[@]}" "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w \
  -o "-p $port -k /tmp -c listen_addresses=127.0.0.1" start >/dev/null
psql=(psql -h 127.0.0.1 -p "$port" -U matchmaker -d postgres -qtAX)
[ "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'game'")" = 1 ] ||
  "${psql[@]}" -c "CREATE DATABASE game" >/dev/null
url="postgresql://matchmaker@127.0.0.1:$port/game"

# Four queues in three partitions: arena runs in partition 0, coop and duel
# in 1, solo in 2 (a stable hash of the name).
queues=demo-data/cluster-queues.json
cat > "$queues" <<'JSON'
{ "sessions": {
    "partitions": 3,
    "queues": [
      { "name": "coop", "min_players": 4, "max_players": 4, "teams": 0, "max_party_size": 4,
        "latency": {},
        "rules": [{ "name": "skill", "max_difference": 200,
                    "expand": { "step": 100, "every": "10s", "limit": 800 } }] },
      { "name": "duel" }, { "name": "arena" }, { "name": "solo" } ] } }
JSON

pids=()
stop_all() {
  trap - INT TERM EXIT
  echo "run cluster: stopping the nodes and the database" >&2
  [ ${#pids[@]} -gt 0 ] && kill -TERM "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  "${as_pg[@]}" "$bin/pg_ctl" -D "$data" -m fast stop >/dev/null || true
}
trap stop_all INT TERM EXIT

node() {  # name, http port, actor port, demo players, extra flags...
  local name=$1 http=$2 actor=$3 players=$4
  shift 4
  ./build/apps/matchmakerd --config "$queues" --database.url="$url" --cluster.total=6 \
    --cluster.node="$name" \
    --cluster.takeover_after=5s --http.port="$http" --actor.port="$actor" \
    --demo.players="$players" --demo.queries_per_second=20 \
    --demo.session_players_per_second=8 "$@" > >(sed -u "s/^/[$name] /") 2>&1 &
  pids+=($!)  # matchmakerd's own: Ctrl-C stops it gracefully (it hands its share over)
  for _ in $(seq 1 600); do  # until it answers (the first fills the player table)
    curl -sf "http://127.0.0.1:$http/api/cluster" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "run cluster: node $name did not start" >&2
  return 1
}

node a 8081 4251 50000 "$@"
node b 8082 4252 0 "$@"
node c 8083 4253 0 "$@"
cat <<TEXT

run cluster: three nodes on $url
  dashboards  http://127.0.0.1:8081/  http://127.0.0.1:8082/  http://127.0.0.1:8083/
  ownership   curl -s localhost:8081/api/cluster   (session_partitions: each queue's node)
  kill one    pgrep -f 'cluster.node=b' | xargs kill -9   (its share is served again within 5 s)
  Ctrl-C stops everything.
TEXT
wait
