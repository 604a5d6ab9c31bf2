#!/usr/bin/env bash
# CI stage: mdap's servers against the clients and checkers people run:
# `maker mcp` against the MCP project's own (docs/mcp.md), `maker serve-sim`
# against the official openai npm client (docs/servesim.md).
#
# - MCP Inspector 2.12's strict portability check of every tool schema
#   (`--method tools/list --strict`), over streamable HTTP and over stdio:
#   no error and no warning.
# - The MCP conformance suite 0.1.16, its active scenarios in one call: no
#   failure and no warning, but in the scenarios that call fixture tools,
#   prompts and resources (test_simple_text, ...) that only the suite's
#   reference server has, or features mdap does not offer and does not
#   declare (completions, logging/setLevel: the server sends no log
#   notifications); those are listed with their reason in
#   .ci/mcp-conformance-expected.yml, and must fail.
# - The openai npm client 6.49 against `maker serve-sim`
#   (.ci/openai-client.mjs): a completion and the model list decode as the
#   client's types, the X-Request-Id header is there, and tool_choice
#   "required" and logprobs are refused with a 400 the client raises.
#
# The checkers are npm packages, installed once into
# ${MDAP_CI_CACHE:-~/.cache/mdap-ci}/mcptools (with Node 22 from npm: the
# suite needs it, the machine's Node may be 20) and reused after.
# MCP_REQUIRED=0 lets the stage pass, skipped, where npm cannot be reached.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
t0=$SECONDS
say() { echo "-- mcp: $* (at $((SECONDS - t0))s)"; }

tools="${MDAP_CI_CACHE:-$HOME/.cache/mdap-ci}/mcptools"
want='@modelcontextprotocol/conformance@0.1.16 @modelcontextprotocol/inspector@2.12.0 openai@6.49.0 node@22'
have() { # have PKG VERSION-PREFIX: the package is installed at that version
  local v
  v=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$tools/node_modules/$1/package.json" 2>/dev/null | head -n 1)
  [[ "$v" == "$2"* ]]
}
if ! have @modelcontextprotocol/conformance 0.1.16 || ! have @modelcontextprotocol/inspector 2.12.0 || ! have openai 6.49.0 || ! have node 22.; then
  say "installing $want into $tools"
  mkdir -p "$tools"
  if ! (cd "$tools" && npm install --no-audit --no-fund --silent $want); then
    if [ "${MCP_REQUIRED:-1}" = 0 ]; then say "npm could not install the checkers; skipped (MCP_REQUIRED=0)"; exit 0; fi
    say "npm could not install the checkers"; exit 1
  fi
fi
export PATH="$tools/node_modules/.bin:$PATH"
say "node $(node --version), conformance $(conformance --version), inspector 2.12.0"

work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
# The maker binary .ci/run built for the stages ($MDAP_MAKER_BIN), else
# one built here.
if [ -n "${MDAP_MAKER_BIN:-}" ] && [ -x "$MDAP_MAKER_BIN" ]; then
  maker=$MDAP_MAKER_BIN
else
  (cd "$root" && go build -o "$work/maker" ./cmd/maker)
  maker="$work/maker"
fi
mkdir -p "$work/root"
export MCP_CATALOG_PATH="$work/catalog.json" # Inspector writes its catalog here, not in ~

address() { # address LOG SED NAME: the address a server prints in LOG, within 10 s
  local a=""
  for _ in $(seq 100); do
    a=$(sed -n "$2" "$1" | head -n 1)
    [ -n "$a" ] && { echo "$a"; return; }
    sleep 0.1
  done
  cat "$1" >&2; say "$3 did not start" >&2; exit 1
}

"$maker" mcp --http 127.0.0.1:0 --no-auth --root "$work/root" --state "$work/state" --log-level warn >"$work/serve.log" 2>&1 &
pid=$!
url=$(address "$work/serve.log" 's/.*serving MCP over streamable HTTP at \(http[^ ]*\).*/\1/p' "maker mcp --http")
say "maker mcp at $url"

strict() { # strict TARGET...: Inspector's --strict check, silent when clean
  if ! mcp-inspector --cli "$@" --method tools/list --strict >"$work/tools.json" 2>"$work/strict.err"; then
    cat "$work/strict.err"; say "Inspector --strict failed on $*"; exit 1
  fi
  if [ -s "$work/strict.err" ]; then
    cat "$work/strict.err"; say "Inspector --strict warned on $*"; exit 1
  fi
  say "Inspector --strict: no warning ($1)"
}
strict "$url"
# Inspector reads the flags after the command as its own: a script holds them.
printf '#!/bin/sh\nexec "%s" mcp --root "%s" --state "%s" --log-level warn\n' "$maker" "$work/root" "$work/state-stdio" >"$work/stdio.sh"
chmod +x "$work/stdio.sh"
strict "$work/stdio.sh"

# The suite's active scenarios, all in one call (each call starts the
# suite anew, seconds each): every one passes with no warning but those
# .ci/mcp-conformance-expected.yml lists with their reasons (fixtures only
# the suite's reference server has, features mdap neither offers nor
# declares), which must fail; one of those passing fails the stage too, so
# the list stays true.
if ! conformance server --url "$url" --expected-failures "$root/.ci/mcp-conformance-expected.yml" >"$work/conformance.out" 2>&1; then
  cat "$work/conformance.out"; say "the conformance suite: a failure or warning not expected, or an expected one that passed (above)"; exit 1
fi
sed -n '/=== SUMMARY ===/,$p' "$work/conformance.out" | grep -E '^(✓|Total)' | sed 's/^/   /'
say "conformance suite: $(grep -cE '^✓' "$work/conformance.out") scenarios passed, the $(grep -cE '^  - ' "$root/.ci/mcp-conformance-expected.yml") expected failures failed"

"$maker" serve-sim --addr 127.0.0.1:0 >"$work/sim.log" 2>&1 &
sim=$!
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; kill "$sim" 2>/dev/null; rm -rf "$work"' EXIT
base=$(address "$work/sim.log" 's/^listening on \(http[^ ]*\)$/\1/p' "maker serve-sim")
# node finds the openai package from the script's folder: it runs from $tools.
cp "$root/.ci/openai-client.mjs" "$tools/openai-client.mjs"
node "$tools/openai-client.mjs" "$base" | sed 's/^/   /'
say "openai client against serve-sim at $base: as documented"
say "done"
