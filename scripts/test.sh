#!/usr/bin/env bash
# The whole test suite (called by `make test` after scripts/deps.sh):
#   1. build (release) and the C unit tests
#   2. integration tests against shoal --threads 1, --threads 4 and redis-server
#   3. sanitizer build (ASan+UBSan): unit tests and the integration tests again
#   4. every fuzz target for a bounded time under ASan/UBSan
# FUZZ_SECONDS (default 20) bounds each fuzz target; SKIP_ASAN=1 / SKIP_FUZZ=1
# shorten a local run.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1

echo "== build"
make -j"$JOBS" all unit

echo "== integration (shoal1, shoal4, redis)"
$PY -m pytest -q -p no:cacheprovider tests/integration

if [ "${SKIP_ASAN:-0}" != 1 ]; then
  echo "== sanitizer build"
  make -j"$JOBS" asan
  make -j"$JOBS" BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -DSHOAL_LIBC_MALLOC" unit
  echo "== integration under ASan/UBSan (shoal1, shoal4)"
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    SHOAL_BIN="$PWD/build-asan/shoal-server" \
    $PY -m pytest -q -p no:cacheprovider tests/integration --target shoal1 --target shoal4
fi

if [ "${SKIP_FUZZ:-0}" != 1 ] && [ -f tests/fuzz/build.sh ]; then
  echo "== fuzz (${FUZZ_SECONDS:-20}s per target)"
  bash tests/fuzz/build.sh
  bash tests/fuzz/run.sh "${FUZZ_SECONDS:-20}"
fi
echo "== all tests passed"
