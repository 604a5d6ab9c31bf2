#!/usr/bin/env bash
# CI stage: watching runs with real components (docs/observe.md).
#
# 1. A real Prometheus (Debian's prometheus package; installed with apt
#    when missing) scrapes a running `maker solve --nats` (through its
#    bearer token) and the `maker worker` drawing its samples; a query through Prometheus's HTTP API
#    returns the sample counters the run's JSON summary reports.
# 2. A real Jaeger v2 (v1.76.0: $MDAP_JAEGER_BIN, $(go env GOPATH)/bin/jaeger
#    or jaeger on PATH, checked with `go version -m`; otherwise built as
#    ../shared/components/README.md says, in the background from the start)
#    receives the trace of a `maker run` whose samples a worker draws over
#    NATS from serve-sim; a query returns one trace with the run, step,
#    model-call and tool spans, the worker's model calls among them, with
#    the GenAI attributes.
#
# Everything listens on loopback, in a temporary folder, and is stopped at
# the end (the prometheus service the package may start is stopped too).
# MDAP_JAEGER_BUILD=0 never builds Jaeger. JAEGER_REQUIRED=1 fails the stage when no Jaeger binary can be had;
# otherwise that half is skipped, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
say() { echo "-- observe: $* (at $((SECONDS - t0))s)"; }

JAEGER_VERSION=v1.76.0
gobin="$(go env GOPATH | cut -d: -f1)/bin"
work=$(mktemp -d)
pids=()
jaeger_build_pid=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "$jaeger_build_pid" ] && kill "$jaeger_build_pid" 2>/dev/null
  if [ "${MDAP_OBSERVE_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# is_jaeger BIN: BIN is a Jaeger built from JAEGER_VERSION.
is_jaeger() {
  [ -n "$1" ] && [ -x "$1" ] &&
    go version -m "$1" 2>/dev/null | grep -qE "^[[:space:]]+(mod|dep)[[:space:]]+github\.com/jaegertracing/jaeger[[:space:]]+${JAEGER_VERSION}([[:space:]]|$)"
}
jaeger_bin=""
for c in "${MDAP_JAEGER_BIN:-}" "$gobin/jaeger" "$(command -v jaeger 2>/dev/null || true)"; do
  if is_jaeger "$c"; then jaeger_bin=$c; break; fi
done
if [ -z "$jaeger_bin" ] && [ "${MDAP_JAEGER_BUILD:-1}" = 0 ]; then
  say "jaeger $JAEGER_VERSION: not installed, and MDAP_JAEGER_BUILD=0: not building it"
elif [ -z "$jaeger_bin" ]; then
  jaeger_log="${TMPDIR:-/tmp}/mdap-jaeger-$JAEGER_VERSION-build.log"
  say "jaeger $JAEGER_VERSION: not installed; building it into $gobin in the background (log: $jaeger_log)"
  mkdir -p "$gobin"
  (
    b=$(mktemp -d) && cd "$b" && go mod init tmp >/dev/null 2>&1 &&
      nice -n 19 go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION" &&
      nice -n 19 go build -o "$gobin/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger
  ) >"$jaeger_log" 2>&1 &
  jaeger_build_pid=$!
  jaeger_bin="$gobin/jaeger"
else
  say "jaeger $JAEGER_VERSION: reusing $jaeger_bin"
fi

# Prometheus from Debian's package.
if ! command -v prometheus >/dev/null; then
  say "installing prometheus with apt"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
# The package may start its own service (on :9090, every interface).
if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then systemctl stop prometheus || true; fi
if [ -x /etc/init.d/prometheus ]; then /etc/init.d/prometheus stop >/dev/null 2>&1 || true; fi

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_http URL SECONDS: until URL answers 200.
wait_http() {
  for _ in $(seq $((${2:-30} * 10))); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no answer from $1"; return 1
}
# bg NAME CMD...: starts CMD in the background, its output in $work/NAME.log.
bg() { local n=$1; shift; "$@" >"$work/$n.log" 2>&1 & pids+=($!); }

# The maker binary .ci/run built for the stages ($MDAP_MAKER_BIN), else
# one built here.
if [ -n "${MDAP_MAKER_BIN:-}" ] && [ -x "$MDAP_MAKER_BIN" ]; then
  maker=$MDAP_MAKER_BIN
else
  go build -o "$work/maker" ./cmd/maker
  maker="$work/maker"
fi

nats_port=$(freeport)
nats="nats://127.0.0.1:$nats_port"
# maker nats makes no shared coordinator key: the solve and the run below
# sign in with keys of their own runs, made before it starts.
"$maker" nats run add observe --creds "$work/nats/creds" >/dev/null
"$maker" nats run add trace --creds "$work/nats/creds" >/dev/null
# No shared worker key either: each worker its own identity.
"$maker" nats worker add w1 --creds "$work/nats/creds" >/dev/null
"$maker" nats worker add w2 --creds "$work/nats/creds" >/dev/null
bg nats "$maker" nats --addr "127.0.0.1:$nats_port" --store "$work/nats"
for _ in $(seq 100); do grep -q "^nats://" "$work/nats.log" && break; sleep 0.1; done
# The engine's role credentials (written by maker nats into STORE/creds):
# each worker its identity (--identity), the coordinators their run's key.
export MDAP_NATS_CREDS="$work/nats/creds"

# ---- 1. Prometheus scrapes maker solve and maker worker -------------------
promtool check rules docs/observe-alerts.yml
(cd docs && promtool test rules observe-alerts_test.yml)
solve_port=$(freeport); worker_port=$(freeport); prom_port=$(freeport)
bg worker "$maker" worker --nats "$nats" --identity w1 --model sim --latency 20ms --inflight 4 --metrics-addr "127.0.0.1:$worker_port"
wait_http "http://127.0.0.1:$worker_port/readyz" 30
# The solve endpoint is guarded by a bearer token, which Prometheus sends
# from a file (docs/observe.md).
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/metrics-token"
chmod 600 "$work/metrics-token"
cat >"$work/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - {job_name: solve, authorization: {credentials_file: "$work/metrics-token"}, static_configs: [{targets: ["127.0.0.1:$solve_port"]}]}
  - {job_name: worker, static_configs: [{targets: ["127.0.0.1:$worker_port"]}]}
EOF
bg prometheus prometheus --config.file "$work/prometheus.yml" --storage.tsdb.path "$work/tsdb" \
  --web.listen-address "127.0.0.1:$prom_port"
wait_http "http://127.0.0.1:$prom_port/-/ready" 60

printf '%s\n' '{"id": "h4", "hanoi": {"disks": 4}}' '{"id": "h5", "hanoi": {"disks": 5}}' >"$work/tasks.jsonl"
say "maker solve over NATS, scraped every second"
MDAP_METRICS_TOKEN="$(cat "$work/metrics-token")" "$maker" solve "$work/tasks.jsonl" --out "$work/results.jsonl" --nats "$nats" --queue observe --json --progress off \
  --metrics-addr "127.0.0.1:$solve_port" --metrics-linger 60s >"$work/summary.json" 2>"$work/solve.log" &
solve_pid=$!; pids+=("$solve_pid")
# has_summary: the summary is written (it comes before the linger).
has_summary() { [ -s "$work/summary.json" ] && jq -e '.samples > 0' "$work/summary.json" >/dev/null 2>&1; }
for _ in $(seq 1200); do has_summary && break; sleep 0.1; done
has_summary || { echo "no summary:"; cat "$work/solve.log"; exit 1; }

query() { curl -fsS "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // "none"'; }
# expect QUERY WANT: Prometheus answers WANT within 20 s (the last scrape
# after the run ended).
expect() {
  local got
  for _ in $(seq 200); do
    got=$(query "$1")
    [ "$got" = "$2" ] && { echo "   $1 = $got"; return 0; }
    sleep 0.1
  done
  echo "!! $1 = $got, want $2"; return 1
}
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$solve_port/metrics")
[ "$code" = 401 ] || { echo "!! /metrics without the token answered $code, want 401"; exit 1; }
echo "   /metrics without the token: 401"
samples=$(jq .samples "$work/summary.json")
flagged=$(jq .flagged "$work/summary.json")
errors=$(jq .errors "$work/summary.json")
steps=$(jq .steps "$work/summary.json")
expect 'sum(mdap_samples_total{job="solve"})' "$samples"
expect 'sum(mdap_samples_total{job="solve",outcome="flagged"})' "$flagged"
expect 'sum(mdap_samples_total{job="solve",outcome="error"})' "$errors"
expect 'sum(mdap_steps_total{job="solve",result="decided"})' "$steps"
expect 'sum(mdap_batch_tasks{job="solve",state="done"})' "$(jq .solved "$work/summary.json")"
kill -INT "$solve_pid"; wait "$solve_pid" || true
# The worker answered the run's samples: some, and at most all of them
# (a sample cancelled before the worker took it is never served).
# The worker's last scrape may come a second after the solve's: wait for
# its counter as expect does (up to 20 s).
for _ in $(seq 200); do
  served=$(query 'sum(mdap_worker_jobs_total{job="worker"})')
  [ "$served" != none ] && [ "$served" -gt 0 ] && break
  sleep 0.1
done
echo "   sum(mdap_worker_jobs_total{job=\"worker\"}) = $served (the run's samples: $samples)"
[ "$served" != none ] && [ "$served" -gt 0 ] || { echo "!! the worker's jobs are not counted"; exit 1; }
[ "$served" -le "$samples" ] || { echo "!! the worker served more jobs than the run drew"; exit 1; }
expect 'up{job="worker"}' 1

# ---- 2. Jaeger receives a run's trace across NATS -------------------------
if [ -n "$jaeger_build_pid" ]; then
  say "waiting for the jaeger build"
  if ! wait "$jaeger_build_pid"; then tail -n 20 "$jaeger_log"; jaeger_bin=""; fi
  jaeger_build_pid=""
fi
if ! is_jaeger "$jaeger_bin"; then
  if [ "${JAEGER_REQUIRED:-0}" = 1 ]; then echo "no jaeger $JAEGER_VERSION binary"; exit 1; fi
  say "SKIPPED the Jaeger half: no jaeger $JAEGER_VERSION binary could be had"
  exit 0
fi
otlp_port=$(freeport); query_port=$(freeport); qgrpc_port=$(freeport); health_port=$(freeport); sim_port=$(freeport)
cat >"$work/jaeger.yaml" <<EOF
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter]}
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
extensions:
  jaeger_storage: {backends: {mem: {memory: {max_traces: 1000}}}}
  jaeger_query:
    storage: {traces: mem}
    http: {endpoint: "127.0.0.1:$query_port"}
    grpc: {endpoint: "127.0.0.1:$qgrpc_port"}
  healthcheckv2: {use_v2: true, http: {endpoint: "127.0.0.1:$health_port"}}
receivers:
  otlp: {protocols: {http: {endpoint: "127.0.0.1:$otlp_port"}}}
processors: {batch: {timeout: 200ms}}
exporters: {jaeger_storage_exporter: {trace_storage: mem}}
EOF
bg jaeger "$jaeger_bin" --config "$work/jaeger.yaml"
wait_http "http://127.0.0.1:$query_port/api/services" 60 || { cat "$work/jaeger.log"; exit 1; }

spec=testdata/spec/find-version.json
export OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$otlp_port" OTEL_BSP_SCHEDULE_DELAY=200
bg servesim "$maker" serve-sim --addr "127.0.0.1:$sim_port" --spec "$spec"
wait_http "http://127.0.0.1:$sim_port/v1/models" 30
OTEL_SERVICE_NAME=maker-worker bg worker2 "$maker" worker --nats "$nats" --identity w2 --model openai:sim --base-url "http://127.0.0.1:$sim_port/v1" --inflight 2
worker2_pid=${pids[-1]}
sleep 1
say "maker run over NATS, traced to Jaeger"
OTEL_SERVICE_NAME=maker "$maker" run "$spec" --nats "$nats" --journal nats:trace --model openai:sim --json --progress off >"$work/run.json" 2>"$work/run.log" ||
  { cat "$work/run.log"; exit 1; }
kill -INT "$worker2_pid"; wait "$worker2_pid" || true # flushes the worker's spans

# One trace holds the run, its steps, the tool calls, the coordinator's
# waits for its samples ("draw sim", no GenAI attribute) and the worker's
# model calls ("chat sim", with the GenAI attributes): each call's tokens
# are on one span.
check_trace() {
  curl -fsS "http://127.0.0.1:$query_port/api/traces?service=maker&operation=maker.run&limit=5" >"$work/traces.json" || return 1
  jq -e '
    (.data | length) == 1 and
    (.data[0] as $t |
      ([$t.spans[].operationName] | (index("maker.run") != null) and (index("maker.step") != null)
        and (map(startswith("execute_tool ")) | any) and (map(. == "chat sim") | any)) and
      ([$t.spans[] | select(.operationName == "chat sim") | $t.processes[.processID].serviceName] | unique == ["maker-worker"]) and
      ([$t.spans[] | select(.operationName == "draw sim") | $t.processes[.processID].serviceName] | unique == ["maker"]) and
      ([$t.spans[] | select(.operationName == "draw sim") | .tags[] | .key | select(startswith("gen_ai."))] | length == 0) and
      ([$t.spans[] | select(.operationName == "chat sim" and $t.processes[.processID].serviceName == "maker-worker") | .tags[] | .key]
        | (index("gen_ai.operation.name") != null) and (index("gen_ai.request.model") != null) and (index("gen_ai.provider.name") != null) and (index("gen_ai.usage.input_tokens") != null))
    )' "$work/traces.json" >/dev/null
}
for _ in $(seq 100); do check_trace && break; sleep 0.2; done
if ! check_trace; then
  echo "!! the trace is not whole:"; jq -c '.data[] | [.spans[] | .operationName] | group_by(.) | map({(.[0]): length}) | add' "$work/traces.json" || cat "$work/traces.json"
  exit 1
fi
jq -r '.data[0] as $t | "   one trace \($t.traceID): " + ([$t.spans[] | "\($t.processes[.processID].serviceName)/\(.operationName)"] | group_by(.) | map("\(.[0]) x\(length)") | join(", "))' "$work/traces.json"
say "passed"
