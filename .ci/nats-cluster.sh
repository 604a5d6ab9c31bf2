#!/usr/bin/env bash
# CI stage: a cluster of three stock nats-server nodes made by `maker nats
# config` (docs/nats.md, "A cluster from nothing"), provisioned with three
# replicas, three workers of their own keys, and three faults, each run
# compared with the same run made locally (solved, no wrong step, as many
# steps; each task of the batch likewise), in about 3 minutes:
#   1. `maker hanoi --nats` with the coordinator's node killed (SIGKILL);
#   2. `maker hanoi --nats` with the coordinator's node stopped for 20 s
#      (SIGSTOP, then SIGCONT), the other two healthy;
#   3. `maker solve --nats` of a batch whose coordinator is killed and
#      started again, with a node killed meanwhile.
# Each prints the longest time the run went without deciding a step.
# MDAP_CI_KEEP=1 keeps the stage's folder (logs, configurations).
# nats-server is found (or installed) as .ci/nats.sh does. Needs jq.
set -euo pipefail
cd "$(dirname "$0")/.."
NATS_SERVER_VERSION=v2.15.2
DISKS=${DISKS:-9}
gobin="$(go env GOPATH | cut -d: -f1)/bin"

is_nats_server() {
  [ -n "$1" ] && [ -x "$1" ] &&
    go version -m "$1" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+github\.com/nats-io/nats-server/v2[[:space:]]+${NATS_SERVER_VERSION}([[:space:]]|$)"
}
server=""
for candidate in "${MDAP_NATS_SERVER:-}" "$gobin/nats-server" "$(command -v nats-server 2>/dev/null || true)"; do
  if is_nats_server "$candidate"; then server=$candidate; break; fi
done
if [ -z "$server" ]; then
  echo "nats-server $NATS_SERVER_VERSION: not installed; installing it into $gobin"
  GOBIN="$gobin" go install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION"
  server="$gobin/nats-server"
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for p in "${pids[@]}"; do # the nodes are disowned: wait for each to end
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  if [ -n "${MDAP_CI_KEEP:-}" ]; then echo "the stage's folder kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
# fail prints each process's last lines: the last two, and before them the
# last twelve that are not progress lines (a run's error, the agent's
# warnings: CI34's failure kept only progress lines); and each run's JSON
# summary, where a run with --json says why it failed (CI58's "stopped:
# exit 1" left only blank progress lines on stderr).
fail() {
  echo "!! $*"
  for f in "$work"/*.json; do
    [ -f "$f" ] || continue
    echo "-- $f"
    head -c 4000 "$f"; echo
  done
  for f in "$work"/*.err "$work"/*.log; do
    [ -f "$f" ] || continue
    echo "-- $f"
    grep -avE '\([0-9]+/[0-9]+' "$f" | tail -n 12
    echo "   (last lines)"
    tail -n 2 "$f"
  done
  exit 1
}

# The maker binary .ci/run built for the stages ($MDAP_MAKER_BIN), else
# one built here.
if [ -n "${MDAP_MAKER_BIN:-}" ] && [ -x "$MDAP_MAKER_BIN" ]; then
  maker=$MDAP_MAKER_BIN
else
  maker="$work/maker"
  go build -o "$maker" ./cmd/maker
fi
export MDAP_STATE_DIR="$work/state"

# Six free loopback ports from a random base (three clients, three routes),
# below the ephemeral range (32768 and up): a node killed and started again
# must find its ports free, and an outgoing connection of any process may
# take an ephemeral port while the node is down (CI3 lost node 3's route
# port that way, and the next fault ran with one node of three).
base=""
for _ in $(seq 50); do
  b=$((20000 + RANDOM % 12000))
  busy=$(ss -ltnH 2>/dev/null | awk '{print $4}' | grep -cE ":($b|$((b+1))|$((b+2))|$((b+3))|$((b+4))|$((b+5)))\$" || true)
  if [ "$busy" = 0 ]; then base=$b; break; fi
done
[ -n "$base" ] || fail "no free range of ports"

urls=$("$maker" nats config --out "$work/cluster" --base-port "$base" 2>"$work/config.err")
creds="$work/cluster/creds"
echo "cluster: $urls"

node_pid=()
node_from=() # the size of node K's log when it was last started
start_node() { # start_node K
  node_from[$1]=$(stat -c %s "$work/node$1.log" 2>/dev/null || echo 0)
  "$server" -c "$work/cluster/node$1.conf" >>"$work/node$1.log" 2>&1 &
  node_pid[$1]=$!
  pids+=($!)
  disown $! # its SIGKILL is the test's, not news
}
# alive K fails the stage when node K has exited (a port taken, say)
# rather than letting the next fault run on one node of three.
alive() {
  kill -0 "${node_pid[$1]}" 2>/dev/null || fail "node $1 did not start again: $(tail -n 1 "$work/node$1.log")"
}
# knows_leader K: waits (at most 30 s) until node K, since its last
# start, knows the cluster's metadata leader. Followers log "JetStream
# cluster new metadata leader: NAME" (or "new remote metadata leader");
# the leader logs "Self is new JetStream cluster metadata leader", which
# the followers' words do not match: waiting for those alone ran out the
# whole wait on whichever node led (30 s and more per wait).
knows_leader() {
  for _ in $(seq 300); do
    tail -c +"$((node_from[$1] + 1))" "$work/node$1.log" 2>/dev/null | grep -qE 'new (JetStream cluster |remote )?metadata leader' && return
    kill -0 "${node_pid[$1]}" 2>/dev/null || return 0 # alive says so
    sleep 0.1
  done
}
for k in 1 2 3; do start_node $k; done
for k in 1 2 3; do
  for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$((base + k - 1))") 2>/dev/null && break; sleep 0.1; done
done

# The cluster is formed once every node knows the metadata leader: on a
# loaded machine that takes seconds, and a provisioner started before it
# finds "no suitable peers for placement" for three replicas.
for k in 1 2 3; do knows_leader $k; done
# The replicas of every stream and bucket: 3 (one line to change where
# the flag moves). A provisioner that still found too few peers is
# started again.
for try in 1 2 3; do
  "$maker" nats provision --nats "$urls" --nats-creds "$creds" --replicas 3 >"$work/provision.out" 2>"$work/provision.err" &
  prov=$!
  for _ in $(seq 300); do grep -q serving "$work/provision.err" && break; kill -0 $prov 2>/dev/null || break; sleep 0.1; done
  grep -q serving "$work/provision.err" && break
  wait $prov || true
  echo "provision (try $try): $(tail -n 1 "$work/provision.err")"
  sleep 2
done
pids+=($prov)
grep -q serving "$work/provision.err" || fail "maker nats provision did not start"
for k in 1 2 3; do
  "$maker" worker --nats "$urls" --nats-creds "$creds/worker$k" --model sim --inflight 4 >"$work/worker$k.log" 2>&1 &
  pids+=($!)
done

# node_of PID: the node (1..3) the process PID is connected to.
node_of() {
  local port
  port=$(ss -tnpH 2>/dev/null | grep "pid=$1," | awk '{print $5}' | grep -oE '[0-9]+$' |
    while read -r p; do [ "$p" -ge "$base" ] && [ "$p" -le $((base + 2)) ] && echo "$p"; done | head -n 1)
  [ -n "$port" ] && echo $((port - base + 1))
}
# longest_stall FILE: the longest time without a new step, from the
# timestamped progress lines of FILE.
longest_stall() {
  grep -aoE '^[0-9.]+ .*\(([0-9]+)/' "$1" | sed -E 's/^([0-9.]+) .*\(([0-9]+)\/$/\1 \2/' |
    awk '{ if ($2 != ls) { if (lt && $1 - lt > g) g = $1 - lt; lt = $1; ls = $2 } } END { printf "%.1f s", g }'
}
# same A.json B.json: the same result: solved, no wrong step (every
# winner is the right move), as many steps. Samples cut short by a fault
# are drawn again, so the counts of samples and tokens may differ.
same() {
  local keys='{solved, wrong_steps, steps}'
  diff <(jq -S "$keys" "$1") <(jq -S "$keys" "$2") >/dev/null || { diff <(jq -S "$keys" "$1") <(jq -S "$keys" "$2") || true; return 1; }
}

"$maker" hanoi --disks "$DISKS" --json --progress off >"$work/local.json"

# hanoi_fault NAME FAULT: a run over the cluster; 4 s in, FAULT (kill or
# stop20) hits the coordinator's node, which is started again after.
hanoi_fault() {
  local name=$1 fault=$2 node pid
  "$maker" hanoi --disks "$DISKS" --json --progress on --nats "$urls" --nats-creds "$creds" --journal "nats:$name" \
    >"$work/$name.json" 2> >(tr '\r' '\n' | while IFS= read -r l; do echo "$(date +%s.%N) $l"; done >"$work/$name.err") &
  pid=$!
  sleep 4
  node=$(node_of $pid) || true
  [ -n "$node" ] || fail "$name: the coordinator's node not found"
  case $fault in
    kill) kill -KILL "${node_pid[$node]}"; echo "$name: killed node $node" ;;
    stop20) kill -STOP "${node_pid[$node]}"; echo "$name: stopped node $node for 20 s"; sleep 20; kill -CONT "${node_pid[$node]}" ;;
  esac
  wait $pid || fail "$name: exit $?"
  same "$work/local.json" "$work/$name.json" || fail "$name: not the local run"
  echo "$name: the local run; longest time without a step $(longest_stall "$work/$name.err")"
  # The node killed is back in the cluster (it knows the leader) before
  # the next fault.
  if [ "$fault" = kill ]; then start_node "$node"; knows_leader "$node"; alive "$node"; fi
}
hanoi_fault killed kill
hanoi_fault stopped stop20

# A batch: its coordinator killed mid-batch (and a node with it, the one
# it is connected to), then started again; the results are a local
# batch's. The kill comes 4 s after the coordinator has its queue (the
# batch takes 20 s and more on two cores), and the batch's results, which
# it writes at its end, must not be there yet.
tasks="$work/tasks.jsonl"
for i in 0 1 2 3 4 5; do echo "{\"id\": \"h$i\", \"hanoi\": {\"disks\": $((8 + i % 3))}}"; done >"$tasks"
"$maker" solve "$tasks" --out "$work/local.jsonl" --progress off >/dev/null
"$maker" solve "$tasks" --out "$work/batch.jsonl" --nats "$urls" --nats-creds "$creds" --concurrency 3 --progress off \
  >"$work/batch1.out" 2>"$work/batch1.err" &
coord=$!
disown $coord # its SIGKILL is the test's, not news
for _ in $(seq 600); do
  grep -q 'tasks on queue' "$work/batch1.err" && break
  kill -0 $coord 2>/dev/null || break
  sleep 0.1
done
sleep 4
node=$(node_of $coord) || true
kill -KILL $coord 2>/dev/null || { cat "$work/batch1.out" "$work/batch1.err"; fail "batch: the coordinator ended before its kill (its output above)"; }
[ ! -s "$work/batch.jsonl" ] || fail "batch: the batch was over before the kill"
[ -n "$node" ] || node=2
kill -KILL "${node_pid[$node]}"
while kill -0 $coord 2>/dev/null; do sleep 0.1; done
echo "batch: coordinator killed mid-batch, and its node $node; node $node and then the coordinator started again"
start_node "$node"
# The cluster settles first (leaders of what the node led): a coordinator
# started during the elections may fail its setup (exit 1, naming the
# engine), and is then simply started again.
knows_leader "$node"
alive "$node"
ok=""
for try in 1 2 3; do
  if "$maker" solve "$tasks" --out "$work/batch.jsonl" --nats "$urls" --nats-creds "$creds" --concurrency 3 --progress off --json \
    >"$work/batch2.json" 2>"$work/batch2.err"; then ok=1; break; fi
  grep -q 'NATS JetStream operation failed' "$work/batch2.err" && ! grep -q 'lease lost' "$work/batch2.err" || break
  echo "batch: rerun $try failed on the engine ($(tail -n 1 "$work/batch2.err")); again"
  sleep 3
done
[ -n "$ok" ] || fail "batch: the rerun failed"
results() { jq -cS '{id, status, steps, wrong_steps}' "$1" | sort; }
diff <(results "$work/local.jsonl") <(results "$work/batch.jsonl") || fail "batch: not the local results"
echo "batch: the local results ($(jq -r '"\(.solved) solved, \(.resumed) resumed, \(.wall_seconds|floor) s"' "$work/batch2.json"))"
echo "nats-cluster: all passed"
