#!/usr/bin/env bash
# Runs units of Redis 7.0.15's own test suite in the suite's own mode, where
# it starts (and restarts, and reconfigures) the server itself. Units tagged
# external:skip (unit/auth, unit/acl, unit/acl-v2, unit/maxmemory, ...) only
# run this way; scripts/suite-floor.sh runs the suite against one external
# server instead.
#
#   scripts/suite-own.sh [--threads N] [--redis] [--keep] [--out DIR] UNIT... [-- RUNTEST-OPTIONS]
#
#   scripts/suite-own.sh unit/auth unit/acl
#   scripts/suite-own.sh --threads 1 unit/acl-v2
#   scripts/suite-own.sh --redis unit/acl         # the same with redis-server 7.0.15
#
# It makes a writable copy of the suite in a temporary folder (the suite
# never enters this repository), links src/redis-server there to
# build/shoal-server (or, with --redis, to Debian's redis-server) and
# src/redis-cli, redis-benchmark, redis-check-aof, redis-check-rdb to
# Debian's tools, adds `threads N` to tests/assets/default.conf when
# --threads is given, and runs
#   ./runtest --single UNIT ... --clients 1 --tags -slow --durable
# on a random base port (others may run the suite on this machine). The
# last lines are the suite's summary; the per-unit counts of passed and
# failed tests follow. --keep leaves the copy (its tests/tmp holds every
# server's log); --out DIR puts the copy there.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
threads=""
redis=0
keep=0
out=""
units=()
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --threads) threads="$2"; shift 2 ;;
        --redis) redis=1; shift ;;
        --keep) keep=1; shift ;;
        --out) out="$2"; keep=1; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n 2,25p "$0"; exit 0 ;;
        -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
        *) units+=("$1"); shift ;;
    esac
done
[ ${#units[@]} -gt 0 ] || { echo "name at least one unit, e.g. unit/acl" >&2; exit 2; }
suite="${REDIS_SUITE:-}"
if [ -z "$suite" ]; then
    for d in "$(cd "$root/.." && pwd)/shared/redis-suite" "$(cd "$root/../.." && pwd)/shared/redis-suite" \
        /work/shared/redis-suite; do
        [ -d "$d/upstream/tests" ] && { suite="$d"; break; }
    done
fi
[ -d "$suite/upstream/tests" ] || { echo "Redis's test suite not found (set REDIS_SUITE)" >&2; exit 2; }
if [ "$redis" = 1 ]; then
    server="$(command -v redis-server)" || { echo "redis-server not installed" >&2; exit 2; }
else
    server="$root/build/shoal-server"
    [ -x "$server" ] || { echo "build/shoal-server not found: run make first" >&2; exit 2; }
fi

if [ -n "$out" ]; then
    mkdir -p "$out"
    copy="$(cd "$out" && pwd)"
else
    copy="$(mktemp -d "${TMPDIR:-/tmp}/shoal-suite-own.XXXXXX")"
fi
[ "$keep" = 1 ] || trap 'rm -rf "$copy"' EXIT
cp -a "$suite/upstream/." "$copy/"
mkdir -p "$copy/src"
ln -sf "$server" "$copy/src/redis-server"
for t in redis-cli redis-benchmark redis-check-aof redis-check-rdb; do
    p="$(command -v "$t")" || { echo "$t not installed (Debian redis-tools)" >&2; exit 2; }
    ln -sf "$p" "$copy/src/$t"
done
conf="$copy/tests/assets/default.conf"
# Directives of features shoal does not have stay unknown to it (replication,
# modules, ...): the copy's default.conf leaves out each line the server
# refuses on its own, and says which.
if [ "$redis" = 0 ]; then
    probe="$copy/probe"
    mkdir -p "$probe"
    kept="$copy/default.conf.kept"
    : >"$kept"
    dropped=""
    while IFS= read -r line || [ -n "$line" ]; do
        case "$line" in ''|'#'*) printf '%s\n' "$line" >>"$kept"; continue ;; esac
        printf 'port 0\nsave ""\ndir %s\n%s\n' "$probe" "$line" >"$probe/p.conf"
        said="$(timeout 2 "$server" "$probe/p.conf" 2>&1)"
        if [[ "$said" == *"FATAL CONFIG FILE ERROR"* ]]; then
            dropped="$dropped ${line%% *}"
        else
            printf '%s\n' "$line" >>"$kept"
        fi
    done <"$conf"
    mv "$kept" "$conf"
    rm -rf "$probe"
    [ -n "$dropped" ] && echo "left out of default.conf (unknown to shoal):$dropped"
fi
[ -n "$threads" ] && printf '\nthreads %s\n' "$threads" >>"$conf"

args=()
for u in "${units[@]}"; do args+=(--single "$u"); done
base=$((22000 + RANDOM % 30000))
cd "$copy" || exit 2
./runtest "${args[@]}" --clients 1 --tags -slow --durable --baseport "$base" --portcount 400 "${extra[@]}" \
    >"$copy/runtest.log" 2>&1
rc=$?
sed 's/\x1b\[[0-9;]*m//g' "$copy/runtest.log" | grep -E '^\[(err|exception|ok|ignore)\]' >"$copy/results.txt"
sed 's/\x1b\[[0-9;]*m//g' "$copy/runtest.log" | grep -E '^\[(err|exception)\]' | head -n 40
# per unit: the tests between "Testing <unit>" and the next one
sed 's/\x1b\[[0-9;]*m//g' "$copy/runtest.log" | awk '
    /^Testing unit\// { u = $2; order[++n] = u }
    /^\[ok\]/ && u { ok[u]++ }
    /^\[(err|exception)\]/ && u { bad[u]++ }
    END { for (i = 1; i <= n; i++) printf "%-28s passed %4d  failed %4d\n", order[i], ok[order[i]], bad[order[i]] }'
echo "passed: $(grep -c '^\[ok\]' "$copy/results.txt")  failed: $(grep -cE '^\[(err|exception)\]' "$copy/results.txt")"
[ "$keep" = 1 ] && echo "# suite copy, runtest.log and server logs in $copy"
exit $rc
