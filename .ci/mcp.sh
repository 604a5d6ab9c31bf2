#!/usr/bin/env bash
# CI stage: mdap's servers against the clients and checkers people run:
# `maker mcp` against the MCP project's own (docs/mcp.md), `maker serve-sim`
# against the official openai npm client (docs/servesim.md).
#
# - MCP Inspector 2.12's strict portability check of every tool schema
#   (`--method tools/list --strict`), over streamable HTTP and over stdio:
#   no error and no warning.
# - The MCP conformance suite 0.1.16, every server scenario that tests a
#   server's protocol rather than the suite's fixture server: no failure and
#   no warning. The others call fixture tools, prompts and resources
#   (test_simple_text, json_schema_2020_12_tool, ...) that only the
#   suite's reference server has, or features mdap does not offer and does
#   not declare (completions, logging/setLevel: the server sends no log
#   notifications); they are listed below with their reason.
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
(cd "$root" && go build -o "$work/maker" ./cmd/maker)
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

"$work/maker" mcp --http 127.0.0.1:0 --no-auth --root "$work/root" --state "$work/state" --log-level warn >"$work/serve.log" 2>&1 &
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
printf '#!/bin/sh\nexec "%s" mcp --root "%s" --state "%s" --log-level warn\n' "$work/maker" "$work/root" "$work/state-stdio" >"$work/stdio.sh"
chmod +x "$work/stdio.sh"
strict "$work/stdio.sh"

# Scenarios of the suite that test the server itself. Left out, and why:
#   tools-call-* (simple-text, image, audio, embedded-resource, mixed-content,
#   with-logging, error, with-progress, sampling, elicitation),
#   json-schema-2020-12, elicitation-sep1034-defaults, elicitation-sep1330-enums,
#   resources-read-*, resources-templates-read, resources-(un)subscribe,
#   prompts-get-*: each calls a fixture of the suite's reference server
#   (a tool, resource or prompt by its fixed name);
#   completion-complete, logging-set-level: features mdap neither offers nor
#   declares (it answers -32601, as the spec asks of an undeclared method).
scenarios="server-initialize ping tools-list resources-list prompts-list server-sse-multiple-streams dns-rebinding-protection"
for s in $scenarios; do
  out=$(conformance server --url "$url" --scenario "$s" 2>&1) || true
  summary=$(echo "$out" | grep -E '^Passed: ' | tail -n 1)
  if ! echo "$summary" | grep -qE '^Passed: ([0-9]+)/\1, 0 failed, 0 warnings'; then
    echo "$out"; say "conformance $s: ${summary:-no summary}"; exit 1
  fi
  say "conformance $s: $summary"
done

"$work/maker" serve-sim --addr 127.0.0.1:0 >"$work/sim.log" 2>&1 &
sim=$!
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; kill "$sim" 2>/dev/null; rm -rf "$work"' EXIT
base=$(address "$work/sim.log" 's/^listening on \(http[^ ]*\)$/\1/p' "maker serve-sim")
# node finds the openai package from the script's folder: it runs from $tools.
cp "$root/.ci/openai-client.mjs" "$tools/openai-client.mjs"
node "$tools/openai-client.mjs" "$base" | sed 's/^/   /'
say "openai client against serve-sim at $base: as documented"
say "done"
