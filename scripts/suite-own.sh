#!/usr/bin/env bash
# Redis's test suite in its own mode: it starts (and restarts, reconfigures)
# build/shoal-server itself, which external-server mode (suite-floor.sh,
# check.sh) cannot do, so units tagged external:skip (unit/maxmemory,
# unit/client-eviction, ...) run too.
#
#   scripts/suite-own.sh [--threads N] [--keep] unit/maxmemory [unit/... ] [-- runtest args]
#
# The suite is copied into a temporary directory (never into the tree);
# src/redis-server there is a link to build/shoal-server and the other
# tools link to the installed redis-cli, redis-benchmark, redis-check-*.
# Directives of tests/assets/default.conf that shoal refuses (features it
# does not have) are commented out in the copy and listed; `threads N` is
# added. Each unit runs with --clients 1 --tags -slow --durable; the last
# line per unit is "<unit>: <passed> passed, <failed> failed".
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
suite=${REDIS_SUITE:-$here/../shared/redis-suite/upstream}
[ -d "$suite" ] || suite=/work/shared/redis-suite/upstream
threads=4
keep=0
units=()
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
    --threads) threads=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --) shift; extra=("$@"); break ;;
    *) units+=("$1"); shift ;;
    esac
done
[ ${#units[@]} -gt 0 ] || { echo "usage: $0 [--threads N] [--keep] unit/name ... [-- runtest args]" >&2; exit 2; }
[ -x "$here/build/shoal-server" ] || { echo "build/shoal-server missing: run make" >&2; exit 2; }

work=$(mktemp -d /tmp/shoal-suite-own.XXXXXX)
cleanup() { [ $keep = 1 ] && echo "kept $work" || rm -rf "$work"; }
trap cleanup EXIT
cp -r "$suite"/. "$work"/
mkdir -p "$work/src"
ln -s "$here/build/shoal-server" "$work/src/redis-server"
for t in redis-cli redis-benchmark redis-check-aof redis-check-rdb; do
    ln -s "$(command -v $t)" "$work/src/$t"
done

# Comment out what the server refuses, one line at a time (its error names
# the line), and check that what is left starts.
conf="$work/tests/assets/default.conf"
printf "\nthreads %s\n" "$threads" >>"$conf"
port=$((20000 + RANDOM % 20000))
for _ in $(seq 1 50); do
    out=$(cd "$work" && timeout 5 "$here/build/shoal-server" "$conf" --port $port --dir "$work" --daemonize no 2>&1 &
        pid=$!
        sleep 0.5
        kill $pid 2>/dev/null
        wait $pid 2>/dev/null)
    line=$(printf '%s\n' "$out" | sed -n 's/.*at line \([0-9]*\).*/\1/p' | head -1)
    [ -n "$line" ] || break
    echo "default.conf: shoal refuses '$(sed -n "${line}p" "$conf")' (commented out)"
    sed -i "${line}s/^/# /" "$conf"
done

cd "$work" || exit 2
rc=0
for u in "${units[@]}"; do
    log="$work/$(echo "$u" | tr / _).log"
    base=$((30000 + RANDOM % 25000)) # others may run the suite on this machine
    ./runtest --single "$u" --clients 1 --tags -slow --durable --baseport $base --portcount 500 "${extra[@]}" >"$log" 2>&1
    sed -i 's/\x1b\[[0-9;]*m//g' "$log" # colours off
    ok=$(grep -c '^\[ok\]' "$log")
    bad=$(grep -c '^\[err\]\|^\[exception\]' "$log")
    grep '^\[err\]\|^\[exception\]\|^\*\*\* \[err\]\|^\[ok\]' "$log"
    echo "$u: $ok passed, $bad failed"
    [ $bad = 0 ] || rc=1
    [ $keep = 1 ] && echo "log: $log"
done
exit $rc
