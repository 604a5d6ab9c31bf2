#!/usr/bin/env bash
# Mutation testing of the lines changed since the last full report
# (called by .ci/lint.sh with the gremlins binary as $1).
#
# Bases: the core packages (vote, intent, executor, maker) are diffed
# against the commit docs/mutation.md records as the base of their full
# report ("Base of the full report: `HASH`"), every other package against
# the commit it records as "Base of the other packages: `HASH`" (they have
# no full report: that base is where this stage began). So a clean clone
# of main mutates every line changed since each was last tried in full.
# MDAP_DIFF_BASE, when set, is the base of every package (e.g. `main` on a
# branch).
# Each package with a changed non-test .go file is run with
# `gremlins unleash --diff BASE` on a scratch clone of HEAD (gremlins edits
# files while it runs), core packages first. The package's own tests
# decide: the tests of its sub-packages are removed from the scratch clone
# for its run, and their files excluded (they are run as packages of their
# own when they changed).
#
# Fails when a mutant on a changed line LIVED and is not listed in
# docs/mutation-justified.txt ("path:MUTATOR:source line, trimmed", or
# "path:MUTATOR@COLUMN:source line" for one of two alike on a line; the
# reasons are in docs/mutation.md). Mutants gremlins finds NOT COVERED are
# counted, not failed (a switch case's condition is "not covered" by Go's
# coverage blocks even when its body runs; see docs/mutation.md).
#
# Packages under MDAP_MUTATION_SKIP (default: cmd benchmarks) are not
# tried: their tests run the built command or whole benchmark suites, so
# each mutant would cost minutes.
#
# Time: at most MDAP_MUTATION_BUDGET seconds (default 120) in all, so
# .ci/run stays under 15 minutes; packages not reached are named, and the
# stage passes on what it tried (refreshing the full report moves the base
# and shrinks the diff). MDAP_MUTATION_WORKERS (default 1) mutants at once.
set -euo pipefail
cd "$(dirname "$0")/.."
gremlins=${1:?usage: .ci/mutation.sh GREMLINS}
budget=${MDAP_MUTATION_BUDGET:-120}
t0=$SECONDS

# recorded NAME: the commit docs/mutation.md records after "NAME: `".
recorded() { grep -oE "$1: \`[0-9a-f]{40}\`" docs/mutation.md | grep -oE '[0-9a-f]{40}' | head -n 1 || true; }
core_base=${MDAP_DIFF_BASE:-$(recorded 'Base of the full report')}
other_base=${MDAP_DIFF_BASE:-$(recorded 'Base of the other packages')}
if [ -z "$core_base" ] || [ -z "$other_base" ]; then
  echo "-- mutation testing: docs/mutation.md records no base (of the full report, of the other packages) and MDAP_DIFF_BASE is unset"; exit 1
fi
for b in "$core_base" "$other_base"; do
  if ! git rev-parse --verify -q "$b^{commit}" >/dev/null; then
    echo "-- mutation testing: base $b is not in this clone (a shallow clone? fetch the history); skipped"; exit 0
  fi
done
core_base=$(git rev-parse "$core_base^{commit}") other_base=$(git rev-parse "$other_base^{commit}")
# is_core PKG: PKG is one of the core packages of the full report.
is_core() { case $1 in vote | intent | executor | maker) return 0 ;; esac; return 1; }
# base_of PKG: the commit PKG's lines are diffed against.
base_of() { if is_core "$1"; then echo "$core_base"; else echo "$other_base"; fi; }
# changed_since BASE: the folders with a non-test .go file changed since BASE.
changed_since() { git diff --name-only "$1"...HEAD -- '*.go' | grep -v '_test\.go$' | xargs -r -n1 dirname | sort -u || true; }
changed=$( (changed_since "$core_base" | while read -r d; do if is_core "$d"; then echo "$d"; fi; done
  changed_since "$other_base" | while read -r d; do if ! is_core "$d"; then echo "$d"; fi; done) | sort -u | awk 'NF')
# Skipped: packages whose tests run the built command or whole suites
# (every mutant there would rebuild and rerun minutes of end-to-end tests).
skip=${MDAP_MUTATION_SKIP:-cmd benchmarks}
for s in $skip; do
  if echo "$changed" | grep -qE "^$s(/|$)"; then
    echo "-- mutation testing: skipping $(echo "$changed" | grep -E "^$s(/|$)" | tr '\n' ' ')(MDAP_MUTATION_SKIP)"
  fi
  changed=$(echo "$changed" | grep -vE "^$s(/|$)" || true)
done
if [ -z "$changed" ]; then
  echo "-- mutation testing: no Go code changed since its base (core $(git rev-parse --short "$core_base"), others $(git rev-parse --short "$other_base"))"; exit 0
fi
# Core packages first: the budget goes to them before the rest.
pkgs=$( (printf '%s\n' vote intent executor maker | grep -Fxf - <(echo "$changed") || true; echo "$changed" | grep -vFx -e vote -e intent -e executor -e maker || true) | awk 'NF')
echo "-- mutation testing of the lines changed since $(git rev-parse --short "$core_base") (core packages) and $(git rev-parse --short "$other_base") (the others): $(echo "$pkgs" | wc -l) packages, budget ${budget}s"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git clone -q --shared --no-checkout . "$scratch/tree"
git -C "$scratch/tree" checkout -q --detach "$(git rev-parse HEAD)"
justified=$PWD/docs/mutation-justified.txt

lived=() notried=() killed=0 notcovered=0
for p in $pkgs; do
  [ -d "$scratch/tree/$p" ] || continue # deleted
  left=$((budget - (SECONDS - t0)))
  if [ "$left" -lt 20 ]; then notried+=("$p"); continue; fi
  ls "$scratch/tree/$p"/*.go >/dev/null 2>&1 || continue
  log="$scratch/$(echo "$p" | tr / _).log"
  basec=$(base_of "$p")
  echo "   ./$p since $(git rev-parse --short "$basec") (at most ${left}s)"
  find "$scratch/tree/$p" -mindepth 2 -name '*_test.go' -delete
  # gremlins v0.6.0 matches the diff's paths (from the repository's root)
  # against paths relative to the package it was given, so in a package
  # below the root no line is ever "changed": run it from the package's
  # folder, with git printing paths relative to it. In its own process
  # group, so the budget can stop it and the tests it runs.
  (cd "$scratch/tree/$p" && GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.relative GIT_CONFIG_VALUE_0=true TMPDIR=$scratch \
    exec setsid "$gremlins" unleash --diff "$basec" --workers "${MDAP_MUTATION_WORKERS:-1}" \
    --timeout-coefficient 5 -E / >"$log" 2>&1) &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - t0)) -lt "$budget" ]; do sleep 1; done
  stopped=""
  if kill -0 "$pid" 2>/dev/null; then
    # Out of time. A test killed mid-run is reported LIVED by gremlins:
    # keep only the results printed before the stop.
    cut=$(wc -l <"$log")
    kill -TERM -- "-$pid" 2>/dev/null || true
    sleep 2
    kill -KILL -- "-$pid" 2>/dev/null || true
    stopped=yes
  fi
  wait "$pid" 2>/dev/null || true
  if [ -n "$stopped" ]; then head -n "$cut" "$log" >"$log.kept" && mv "$log.kept" "$log"; fi
  git -C "$scratch/tree" checkout -q -- "$p"
  if [ -n "$stopped" ]; then
    notried+=("$p (stopped at the budget)")
  elif ! grep -qE 'Mutation testing completed|No results to report' "$log"; then
    echo "gremlins failed on ./$p:"; tail -n 30 "$log"; exit 1
  fi
  grep -E '^[[:space:]]+(KILLED|LIVED|TIMED OUT|NOT COVERED)' "$log" | sed 's/^/      /' || true
  killed=$((killed + $(grep -cE '^[[:space:]]+(KILLED|TIMED OUT)' "$log" || true)))
  notcovered=$((notcovered + $(grep -cE '^[[:space:]]+NOT COVERED' "$log" || true)))
  while read -r _ mut _ pos; do
    file=${pos%%:*} rest=${pos#*:} line=${rest%%:*}
    src=$(sed -n "${line}p" "$scratch/tree/$p/$file" | sed -E 's/^[[:space:]]+|[[:space:]]+$//g')
    col=${rest#*:}
    if grep -Fxq -e "$p/$file:$mut:$src" -e "$p/$file:$mut@$col:$src" "$justified" 2>/dev/null; then
      echo "      (justified in docs/mutation.md: $p/$file:$line $mut)"
    else
      lived+=("$p/$file:$line:${rest#*:} $mut    $src")
    fi
  done < <(grep -E '^[[:space:]]+LIVED ' "$log" || true)
done
echo "-- mutation testing: ${killed} killed, ${#lived[@]} lived unjustified, ${notcovered} not covered, in $((SECONDS - t0))s"
if [ ${#notried[@]} -gt 0 ]; then
  echo "   not tried within the ${budget}s budget: ${notried[*]}"
  echo "   (a full report moves the base in docs/mutation.md and shrinks the diff)"
fi
if [ ${#lived[@]} -gt 0 ]; then
  echo "mutants on changed lines that no test kills: kill each with a test that asserts real"
  echo "behaviour, or justify it (docs/mutation.md, docs/mutation-justified.txt):"
  printf '   %s\n' "${lived[@]}"
  exit 1
fi
