#!/usr/bin/env bash
# CI lint stage: staticcheck, deadcode -test, and mutation testing of the
# lines a change touches (gremlins in diff mode). Called from .ci/run.
#
# Each tool is reused when an installed binary is of the pinned version
# ($(go env GOPATH)/bin, or on PATH), else installed with `go install`
# from the module proxy:
#   staticcheck  honnef.co/go/tools/cmd/staticcheck@v0.8.2
#   deadcode     golang.org/x/tools/cmd/deadcode@v0.52.0
#   gremlins     github.com/go-gremlins/gremlins/cmd/gremlins@latest
#
# Mutation testing of the diff: MDAP_DIFF_BASE (default: main, if that
# branch exists and differs from HEAD) names the base; each package with a
# changed .go file is run with `gremlins unleash --diff BASE`, so only the
# mutants on changed lines are tried. The stage fails when the efficacy
# (killed / (killed + lived)) is under MDAP_MUTATION_EFFICACY percent
# (default 80). MDAP_MUTATION=off skips it. The full run, slow (vote
# alone over 8 minutes on 2 cores), is documented in docs/mutation.md.
set -euo pipefail
cd "$(dirname "$0")/.."
gobin="$(go env GOPATH | cut -d: -f1)/bin"

# tool NAME MODULE VERSION PACKAGE: prints the path of NAME at VERSION,
# installing it if needed.
tool() {
  local name=$1 mod=$2 version=$3 pkg=$4 c
  for c in "$gobin/$name" "$(command -v "$name" 2>/dev/null || true)"; do
    if [ -n "$c" ] && [ -x "$c" ] && { [ "$version" = latest ] ||
      go version -m "$c" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+${mod//./\\.}[[:space:]]+${version}([[:space:]]|$)"; }; then
      echo "$c"; return
    fi
  done
  echo "   installing $pkg@$version into $gobin" >&2
  GOBIN="$gobin" go install "$pkg@$version" >&2
  echo "$gobin/$name"
}

staticcheck=$(tool staticcheck honnef.co/go/tools v0.8.2 honnef.co/go/tools/cmd/staticcheck)
echo "-- staticcheck ($staticcheck)"
"$staticcheck" ./...

deadcode=$(tool deadcode golang.org/x/tools v0.52.0 golang.org/x/tools/cmd/deadcode)
echo "-- deadcode -test ($deadcode)"
dead=$("$deadcode" -test ./...)
if [ -n "$dead" ]; then
  echo "unreachable functions (remove them, or give them a caller):"; echo "$dead"; exit 1
fi

if [ "${MDAP_MUTATION:-on}" = off ]; then
  echo "-- mutation testing: skipped (MDAP_MUTATION=off)"; exit 0
fi
base=${MDAP_DIFF_BASE:-main}
if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
  echo "-- mutation testing: no base $base to diff against; skipped"; exit 0
fi
pkgs=$(git diff --name-only "$base"...HEAD -- '*.go' | grep -v '_test\.go$' | xargs -r -n1 dirname | sort -u || true)
if [ -z "$pkgs" ]; then
  echo "-- mutation testing: no Go code changed since $base"; exit 0
fi
gremlins=$(tool gremlins github.com/go-gremlins/gremlins latest github.com/go-gremlins/gremlins/cmd/gremlins)
for p in $pkgs; do
  [ -d "$p" ] || continue # deleted
  echo "-- gremlins --diff $base ./$p"
  "$gremlins" unleash --diff "$base" --timeout-coefficient 10 \
    --threshold-efficacy "${MDAP_MUTATION_EFFICACY:-80}" "./$p"
done
