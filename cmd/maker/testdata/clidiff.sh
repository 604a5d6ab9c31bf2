#!/bin/sh
# clidiff.sh BINARY OUTFILE: the --help of every command and the message
# and exit status of a list of bad inputs, for diffing two builds of maker
# (the command line must not change when its logic moves into libraries).
# Run from the repository root: BINARY=/tmp/maker-before sh cmd/maker/testdata/clidiff.sh
set -u
bin=$1
out=$2
: >"$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
	printf '=== maker %s\n' "$*" | sed "s|$tmp|TMP|g" >>"$out"
	(cd "$tmp" && env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u MDAP_METRICS_TOKEN -u MDAP_MCP_TOKEN HOME="$tmp" timeout 20 "$bin" "$@" </dev/null >stdout 2>stderr; echo "exit $?" >code)
	sed "s|$tmp|TMP|g" "$tmp/stdout" "$tmp/stderr" "$tmp/code" >>"$out"
}
run --help
for c in hanoi run solve parse kmin calibrate tools serve-sim mcp nats worker bench completion multiply sort problem view; do
	run "$c" --help
done
for c in $("$bin" nats --help | sed -n '/^Available Commands:/,/^$/p' | awk 'NR>1 && NF {print $1}'); do
	run nats "$c" --help
done
spec=$(pwd)/testdata/spec/find-version.json
echo '{"steps":' >"$tmp/bad.json"
mkdir -p "$tmp/benchout"
echo 'not json' >"$tmp/benchout/report.json"
printf 'sim\nbogus\n' >"$tmp/models.txt"
# run flags (hanoi and run share them)
while IFS= read -r line; do
	[ -z "$line" ] && continue
	# shellcheck disable=SC2086
	eval "run $line"
done <<EOF2
hanoi --disks 0
hanoi --disks 31
hanoi --k 0
hanoi --k 1001
hanoi --k bogus
hanoi --k 3 --parallel 4
hanoi --parallel -1
hanoi --max-samples 2 --k 3
hanoi --max-samples 16777217
hanoi --max-errors -1
hanoi --max-errors 16777217
hanoi --max-tokens 0
hanoi --max-tokens 1048577
hanoi --timeout 0s
hanoi --journal ""
hanoi --resume
hanoi --resume-or-start
hanoi --journal-unsigned
hanoi --rerun-pending
hanoi --progress sometimes
hanoi --k-floor 3
hanoi --k-max 3
hanoi --target 0.9
hanoi --k auto --target 1.5
hanoi --k auto --k-floor 1
hanoi --k auto --k-floor 1001
hanoi --k auto --k-max 2
hanoi --k auto --k-max 1001
hanoi --p 1.5
hanoi --p 0
hanoi --flag-rate -0.1
hanoi --flag-rate 0.7 --error-rate 0.4
hanoi --error-rate 2
hanoi --wrong-answers 0
hanoi --wrong-answers 1048577
hanoi --concentration 2
hanoi --latency -1s
hanoi --latency-sigma 0.5
hanoi --latency 1ms --latency-sigma -1
hanoi --difficulty-spread 1
hanoi --hard-agree 2
hanoi --p-late 0.5
hanoi --p-late 0.5 --p-change-at -1
hanoi --p-late 1.5 --p-change-at 3
hanoi --model openai:x --p 0.9
hanoi --model openai:x --seed 3
hanoi --model ""
hanoi --model bogus
hanoi --model sim --structured
hanoi --model "sim;rpm=5"
hanoi --model anthropic:claude-3-5-haiku --structured
hanoi --base-url "ftp://x"
hanoi --base-url "http://"
hanoi --price-in -1
hanoi --price-out 1e7
hanoi --samples-per-call 0
hanoi --samples-per-call bogus
hanoi --samples-per-call 1000000
hanoi --max-cost -1
hanoi --max-cost inf
hanoi --escalate-after 3
hanoi --escalate-k 3
hanoi --escalate-model sim
hanoi --escalate bogus
hanoi --escalate raise-k --escalate-after -1
hanoi --escalate raise-k --escalate-after 1048577
hanoi --escalate raise-k --escalate-k -1
hanoi --escalate raise-k --escalate-k 1001
hanoi --escalate stop --escalate-k 3
hanoi --escalate model
hanoi --escalate stop --escalate-model sim
hanoi --models ""
hanoi --models nonexistent.txt
hanoi --models $tmp/models.txt
hanoi --log-format xml
hanoi --metrics-linger -1s
hanoi --metrics-linger 1s
hanoi --metrics-addr 0.0.0.0:0
hanoi --metrics-addr nonsense
hanoi --metrics-addr 127.0.0.1:99999
hanoi --nats nats://127.0.0.1:1 --model sim --model sim
hanoi --nats nats://127.0.0.1:1 --structured --model openai:x
run
run $spec --max-steps -1
run $spec --tool-declaration bogus
run $spec --tools bogus
run $spec --root /nonexistent
run /nonexistent.json
run $tmp/bad.json
run $spec --k 0
solve
solve $tmp/x.jsonl
solve $tmp/x.jsonl --out r.jsonl --k auto
solve $tmp/x.jsonl --out r.jsonl --journal j
solve $tmp/x.jsonl --out r.jsonl --structured
solve $tmp/x.jsonl --out r.jsonl --verbose
solve $tmp/x.jsonl --out r.jsonl --concurrency 0
solve $tmp/x.jsonl --out r.jsonl --concurrency -1
solve $tmp/x.jsonl --out r.jsonl --max-inflight -1
solve $tmp/x.jsonl --out r.jsonl --rpm -1
solve $tmp/x.jsonl --out r.jsonl --max-steps -1
solve $tmp/x.jsonl --out r.jsonl --tool-declaration bogus
solve $tmp/x.jsonl --out r.jsonl --tools bogus
solve $tmp/x.jsonl --out r.jsonl --journal-unsigned
solve $tmp/x.jsonl --out r.jsonl --k 0
solve $tmp/x.jsonl --out r.jsonl
parse --max-tokens 0
parse /nonexistent
parse --spec /nonexistent
parse $tmp/bad.json
kmin --p 0.4
kmin --steps 0
kmin --target 2
kmin --valid-rate 0
kmin --price -1
calibrate --journal x
calibrate --k auto
calibrate --until-max-samples 10
calibrate --disks 3 --spec $spec
calibrate --disks 0
calibrate --disks 31
calibrate --root .
calibrate --steps-sampled 0
calibrate --samples 0
calibrate --samples -1
calibrate --confidence 0
calibrate --confidence 1.5
calibrate --concurrency 0
calibrate --target 0
calibrate --until-decided --until-max-samples 5
calibrate --spec /nonexistent
calibrate --spec $spec --tool-declaration bogus
calibrate --p 2
calibrate --max-cost -1
tools --tools bogus
tools --root /nonexistent
serve-sim --addr nonsense
serve-sim --addr 0.0.0.0:8090
serve-sim --addr 127.0.0.1:99999
serve-sim --fault-429 2
serve-sim --fault-429 0.6 --fault-500 0.6
serve-sim --retry-after -1
serve-sim --retry-after 100000
serve-sim --model-name ""
serve-sim --cache-min-tokens 0
serve-sim --cache-block-tokens 0
serve-sim --cache-entries 0
serve-sim --cache-ttl 0s
serve-sim --reasoning-tokens -1
serve-sim --reasoning-tokens 100000000
serve-sim --p 2
serve-sim --task bogus
serve-sim --task spec
serve-sim --task hanoi --spec $spec
serve-sim --spec /nonexistent
serve-sim --log-format xml
mcp --token x
mcp --allow-remote
mcp --no-auth
mcp --http 127.0.0.1:0 --no-auth --token x
mcp --http 127.0.0.1:0 --token ""
mcp --model ""
mcp --state ""
mcp --metrics-addr 127.0.0.1:0
mcp --timeout 0s
mcp --max-k 0
mcp --max-k -1
mcp --max-samples 0
mcp --max-request-bytes 0
mcp --p 2
mcp --flag-rate -1
mcp --latency -1s
mcp --model bogus
mcp --base-url ftp://x
mcp --tool-declaration bogus
mcp --tools bogus
mcp --http 0.0.0.0:0
mcp --http nonsense
mcp --log-level loud
mcp --log-format xml
multiply --max-depth 31
multiply --max-depth -1
multiply --max-breadth 1
multiply --max-breadth 65
multiply --max-samples -1
multiply --max-tokens -1
multiply --max-tokens 1048577
multiply --model bogus
multiply --model ""
multiply --model-solve bogus
multiply --model sim --model-solve bogus
multiply --model openai:x --base-url ftp://x
multiply --model openai:x --rivals 2
multiply --model openai:x --latency 1s
multiply --p-solve 2
multiply --p-solve 0.3
multiply --k bogus=1
multiply --k solve=0
multiply --price all=x
multiply --price bogus=1/2
multiply --resume
multiply --journal $spec
multiply --strategy bogus
multiply --target 2
multiply --parallel -1
multiply --cofailure 2
multiply --timeout -1s
multiply --digits 0
multiply --a 12
sort --max-depth 31
sort --length 0
sort --max-breadth 1
problem --max-depth 31
problem --spec /nonexistent
calibrate --roles bogus
calibrate --roles multiply --roles-size -1
calibrate --roles multiply --roles-problems 0
calibrate --roles multiply --k 3
calibrate --roles-size 3
view
view --png x.png /nonexistent
view --max-cost -1 /nonexistent
view --target 2 /nonexistent
bench --suite bogus
bench --out ""
bench --out $spec
bench --merge --out $tmp/nothere
bench --merge --out $tmp/benchout
completion
completion tcsh
bogus
hanoi --bogus
EOF2
