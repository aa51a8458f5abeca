#!/usr/bin/env bash
# Runs every fuzz target built by tests/fuzz/build.sh for SECONDS each
# (default 20), one after another, on a temporary copy of its seed corpus
# (tests/fuzz/corpus/<target>/ is never modified). Exits non-zero when any
# target reports a crash, leak, timeout or OOM; the reproducer is kept in
# the printed directory.
#   bash tests/fuzz/run.sh [SECONDS] [target...]
set -uo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-20}
shift || true
OUT=${FUZZ_BUILD:-build-fuzz}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for t in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$t" .c)"); done
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
# UBSan reports are fatal (halt_on_error); FUZZ_UBSAN_SUPP may name an extra
# suppressions file for a local run while a known finding is being fixed.
supp="$PWD/tests/fuzz/ubsan.supp"
if [ -n "${FUZZ_UBSAN_SUPP:-}" ]; then
  merged=$(mktemp /tmp/shoal-fuzz-ubsan.XXXXXX)
  trap 'rm -f "$merged"' EXIT
  cat "$supp" "$FUZZ_UBSAN_SUPP" >"$merged"
  supp=$merged
fi
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1:suppressions=$supp}
fail=0
for name in "${targets[@]}"; do
  work=$(mktemp -d "/tmp/shoal-fuzz-$name.XXXXXX")
  mkdir -p "$work/corpus" "$work/artifacts"
  [ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$work/corpus/"
  echo "== $name (${SECS}s) in $work"
  export TMPDIR="$work"
  dict=(); [ -f "tests/fuzz/$name.dict" ] && dict=(-dict="$PWD/tests/fuzz/$name.dict")
  if "$OUT/$name" "${dict[@]}" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
       "$work/corpus" >"$work/log" 2>&1; then
    tail -n 12 "$work/log" | grep -E '^(#|stat::|Done)' | tail -n 4
    rm -rf "$work"
  else
    echo "!! $name found a problem; log and reproducer in $work"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written|^fuzz_' "$work/log" | head -n 20
    fail=1
  fi
done
exit $fail
