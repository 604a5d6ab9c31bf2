#!/usr/bin/env bash
# CI stage: the engine's roles on a stock nats-server (docs/nats.md).
# A nats-server of NATS_SERVER_VERSION is reused when there is one
# ($MDAP_NATS_SERVER, $(go env GOPATH)/bin/nats-server, or nats-server on
# PATH, checked with `go version -m`); otherwise it is installed with
# `go install` into $(go env GOPATH)/bin. Then TestStockNATSServerRoles runs
# against it, provisioned as `maker nats provision` does: a squatted job stream
# set back, the attacks of issue 35 with worker and coordinator credentials
# (owned), one run's coordinator against another run's journal, lease and task
# queue (tenants), a NAK steal (steal), a reply flood (flood), a rogue with no
# credentials and with worker credentials answering jobs first, a liar worker
# beside two honest ones under MinVoters 2 (liar), the same in a batch of
# tasks solved at once, quarantined and given no job of the next batch
# (batchliar), and a full job stream
# failing a sample at once (full).
set -euo pipefail
cd "$(dirname "$0")/.."
NATS_SERVER_VERSION=v2.15.2
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
MDAP_NATS_SERVER="$bin" go test -race -count=1 -run '^TestStockNATSServerRoles$' -v ./maker/cluster | grep -E '^(=== RUN|--- |ok|FAIL|PASS)'
