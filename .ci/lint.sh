#!/usr/bin/env bash
# CI lint stage: staticcheck, deadcode -test, and mutation testing of the
# lines a change touches (gremlins in diff mode). Called from .ci/run.
#
# Each tool is reused when an installed binary is of the pinned version
# ($(go env GOPATH)/bin, or on PATH), else installed with `go install`
# from the module proxy:
#   staticcheck  honnef.co/go/tools/cmd/staticcheck@v0.8.2
#   deadcode     golang.org/x/tools/cmd/deadcode@v0.52.0
#   gremlins     github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
#
# Mutation testing of the lines changed since the last full report
# (.ci/mutation.sh: base, budget, justified survivors). MDAP_MUTATION=off
# skips it. The full run, slow, is documented in docs/mutation.md.
#
# .ci/lint.sh static runs the first two only, .ci/lint.sh mutation the
# last only (.ci/run runs them apart: the static checks, a fixed amount
# of work, beside the tests; mutation testing, held to a wall-time
# budget, after them); no argument runs all three.
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

# static: staticcheck and deadcode -test.
static() {
  local staticcheck deadcode dead
  staticcheck=$(tool staticcheck honnef.co/go/tools v0.8.2 honnef.co/go/tools/cmd/staticcheck)
  echo "-- staticcheck ($staticcheck)"
  "$staticcheck" ./...

  deadcode=$(tool deadcode golang.org/x/tools v0.52.0 golang.org/x/tools/cmd/deadcode)
  echo "-- deadcode -test ($deadcode)"
  dead=$("$deadcode" -test ./...)
  if [ -n "$dead" ]; then
    echo "unreachable functions (remove them, or give them a caller):"; echo "$dead"; return 1
  fi
}

# mutation: mutation testing of the lines changed since the last full
# report, unless MDAP_MUTATION=off.
mutation() {
  local gremlins
  if [ "${MDAP_MUTATION:-on}" = off ]; then
    echo "-- mutation testing: skipped (MDAP_MUTATION=off)"; return 0
  fi
  gremlins=$(tool gremlins github.com/go-gremlins/gremlins v0.6.0 github.com/go-gremlins/gremlins/cmd/gremlins)
  echo "-- mutation testing ($gremlins)"
  .ci/mutation.sh "$gremlins"
}

case ${1:-all} in
all) static; mutation ;;
static) static ;;
mutation) mutation ;;
*) echo "usage: .ci/lint.sh [static|mutation]" >&2; exit 2 ;;
esac
