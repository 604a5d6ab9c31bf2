#!/usr/bin/env bash
# CI stage: the engine's roles on a stock nats-server (docs/nats.md).
# A nats-server of NATS_SERVER_VERSION is reused when there is one
# ($MDAP_NATS_SERVER, $(go env GOPATH)/bin/nats-server, or nats-server on
# PATH, checked with `go version -m`); otherwise it is installed with
# `go install` into $(go env GOPATH)/bin. Then TestStockNATSServerRoles runs
# against it, provisioned as `maker nats provision` does: a squatted job stream
# set back, the attacks of issue 35 with worker and coordinator credentials
# (owned), one run's coordinator against another run's journal, lease and task
# queue (tenants), one run key flooding its journal budget beside another
# run key's run (runbudget), one run key reading the reply stream's subjects and trying
# each as another run's reply consumer: info, pull, delete (replytheft), a NAK
# steal (steal), a reply flood by one worker identity
# on every Drawer the reply stream names, keeping an honest stored reply and
# refused past its own room (flood), one run key
# publishing jobs in a loop beside another run (keyjobs), a rogue with no
# credentials and with worker credentials answering jobs first, a liar worker
# beside two honest ones under MinVoters 2 (liar), the same in a batch of
# tasks solved at once, quarantined and given no job of the next batch
# (batchliar), one worker identity asking for 100 routes of its invention
# (routequota), a coordinator and a worker against an engine of another
# protocol failing at once naming both (version), one run key flooding 20
# served routes (manyroutes), a full reply stream failing a sample within
# seconds naming it (repliesfull), and a full job stream
# failing a sample at once (full). TestStockNATSServerTakesIssuedWorkersAtReload:
# a worker issued after start signs in once the accounts block is written again
# and the server reloaded (SIGHUP), serves a run key's sample, and is cut off
# when revoked and reloaded again (docs/nats.md, "one identity per worker").
#
# Then natscli (NATSCLI_VERSION, reused or installed like nats-server:
# $MDAP_NATSCLI, $(go env GOPATH)/bin/nats, or nats on PATH) against both
# engines, with the connection options docs/nats.md gives ("The nats CLI"):
# the embedded `maker nats`, and a stock nats-server configured by
# `maker nats config --nodes 1` (cluster.StockAuthConfig) and provisioned by
# `maker nats provision`. On each, as the admin, `nats stream ls` and
# `nats kv ls` list the engine's streams and buckets; as a coordinator (a
# run key, `maker nats run add ci`, on the embedded engine, which makes no
# shared coordinator.nk; coordinator.nk on the stock one),
# `nats stream info MDAP_JOBS` answers and `nats stream ls` is refused.
set -euo pipefail
cd "$(dirname "$0")/.."
NATS_SERVER_VERSION=v2.15.2
NATSCLI_VERSION=v0.5.1
gobin="$(go env GOPATH | cut -d: -f1)/bin"

is_nats_server() {
  [ -n "$1" ] && [ -x "$1" ] &&
    go version -m "$1" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+github\.com/nats-io/nats-server/v2[[:space:]]+${NATS_SERVER_VERSION}([[:space:]]|$)"
}

bin=""
for candidate in "${MDAP_NATS_SERVER:-}" "$gobin/nats-server" "$(command -v nats-server 2>/dev/null || true)"; do
  if is_nats_server "$candidate"; then bin=$candidate; break; fi
done
if [ -z "$bin" ]; then
  echo "nats-server $NATS_SERVER_VERSION: not installed; installing it into $gobin"
  GOBIN="$gobin" go install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION"
  bin="$gobin/nats-server"
else
  echo "nats-server $NATS_SERVER_VERSION: reusing $bin"
fi
MDAP_NATS_SERVER="$bin" go test -race -count=1 -run '^TestStockNATSServer(Roles|OldAuthBlock|TakesIssuedWorkersAtReload)$' -v ./maker/cluster | grep -E '^(=== RUN|--- |ok|FAIL|PASS)'

# natscli against both engines.
is_natscli() {
  [ -n "$1" ] && [ -x "$1" ] &&
    go version -m "$1" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+github\.com/nats-io/natscli[[:space:]]+${NATSCLI_VERSION}([[:space:]]|$)"
}
cli=""
for candidate in "${MDAP_NATSCLI:-}" "$gobin/nats" "$(command -v nats 2>/dev/null || true)"; do
  if is_natscli "$candidate"; then cli=$candidate; break; fi
done
if [ -z "$cli" ]; then
  echo "natscli $NATSCLI_VERSION: not installed; installing it into $gobin"
  GOBIN="$gobin" go install "github.com/nats-io/natscli/nats@$NATSCLI_VERSION"
  cli="$gobin/nats"
else
  echo "natscli $NATSCLI_VERSION: reusing $cli"
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# The maker binary .ci/run built for the stages ($MDAP_MAKER_BIN), else
# one built here.
if [ -n "${MDAP_MAKER_BIN:-}" ] && [ -x "$MDAP_MAKER_BIN" ]; then
  maker=$MDAP_MAKER_BIN
else
  maker="$work/maker"
  go build -o "$maker" ./cmd/maker
fi

# natsas KEY CREDS URL ARGS...: natscli signed in with CREDS/KEY.nk (a role,
# or runs/RUN), the inbox prefix and connection name docs/nats.md gives.
natsas() {
  local role=$1 creds=$2 url=$3
  shift 3
  local inbox
  inbox="_INBOX_$(head -n1 "$creds/$role.pub").natscli"
  timeout 30 "$cli" --server "$url" --nkey "$creds/$role.nk" --inbox-prefix "$inbox" --connection-name "natscli $inbox" "$@"
}

# check_engine NAME URL CREDS COORD: what natscli must see on an engine,
# with COORD the coordinator's key (as natsas takes it).
check_engine() {
  local name=$1 url=$2 creds=$3 coord=$4 streams buckets missing info
  for _ in $(seq 60); do # a stock server is provisioned in the background
    streams=$(natsas admin "$creds" "$url" stream ls --names 2>&1) || true
    buckets=$(natsas admin "$creds" "$url" kv ls --names 2>&1) || true
    missing=""
    for s in MDAP_JOBS MDAP_REPLIES MDAP_JOURNALS MDAP_TASKS; do
      grep -qx "$s" <<<"$streams" || missing+=" stream $s"
    done
    for b in MDAP_LEASES MDAP_RESULTS; do
      grep -qx "$b" <<<"$buckets" || missing+=" bucket $b"
    done
    [ -z "$missing" ] && break
    sleep 1
  done
  if [ -n "$missing" ]; then
    echo "natscli on $name: nats stream ls / kv ls as the admin lack$missing: $streams / $buckets"
    exit 1
  fi
  info=$(natsas "$coord" "$creds" "$url" stream info MDAP_JOBS --json) && grep -q '"name": "MDAP_JOBS"' <<<"$info" ||
    { echo "natscli on $name: a coordinator's nats stream info MDAP_JOBS failed: $info"; exit 1; }
  if natsas "$coord" "$creds" "$url" stream ls --names >/dev/null 2>&1; then
    echo "natscli on $name: a coordinator listed the streams"; exit 1
  fi
  echo "natscli on $name: stream ls, kv ls (admin), stream info MDAP_JOBS (coordinator): ok"
}

# The embedded engine: no shared coordinator key; a run's key made before
# it starts, so it is accepted from the start.
"$maker" nats run add ci --creds "$work/embedded/creds" >/dev/null
"$maker" nats --addr 127.0.0.1:0 --store "$work/embedded" >"$work/embedded.url" 2>"$work/embedded.log" &
pids+=($!)
for _ in $(seq 100); do grep -q '^nats://' "$work/embedded.url" 2>/dev/null && break; sleep 0.1; done
[ ! -e "$work/embedded/creds/coordinator.nk" ] || { echo "maker nats wrote the shared coordinator.nk without --shared-coordinator"; exit 1; }
[ ! -e "$work/embedded/creds/worker.nk" ] || { echo "maker nats wrote the shared worker.nk without --shared-worker"; exit 1; }
check_engine "maker nats" "$(head -n1 "$work/embedded.url")" "$work/embedded/creds" runs/ci

# A stock nats-server with mdap's roles, one node.
# Below 20000: .ci/nats-cluster.sh, which may run at once (.ci/run's
# lanes), takes its nodes' ports from 20000 to 32005, and the ephemeral
# range starts at 32768.
port=$((10000 + RANDOM % 10000))
url=$("$maker" nats config --nodes 1 --base-port "$port" --out "$work/stock" 2>/dev/null)
"$bin" -c "$work/stock/node1.conf" >"$work/stock.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q 'Server is ready' "$work/stock.log" && break; sleep 0.1; done
"$maker" nats provision --nats "$url" --nats-creds "$work/stock/creds" >"$work/provision.log" 2>&1 &
pids+=($!)
check_engine "a stock nats-server $NATS_SERVER_VERSION" "$url" "$work/stock/creds" coordinator
