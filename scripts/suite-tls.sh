#!/usr/bin/env bash
# Redis 7.0.15's own Tcl suite in its own mode (the suite starts and
# configures the server itself), over TLS by default, against shoal or
# redis-server, one unit at a time; prints the tests passed per unit.
#
#   scripts/suite-tls.sh                                  # shoal, default threads, TLS
#   scripts/suite-tls.sh --threads 1 --units "unit/type/string unit/keyspace"
#   scripts/suite-tls.sh --server redis                   # the reference, same copy and options
#   scripts/suite-tls.sh --plain                          # the same without --tls
#
# Run from the project root after `make`. The suite is copied from
# ../shared/redis-suite/upstream into $SUITE_BASE-<server> (never into the
# repository); src/redis-server there links to the server under test and the
# other src/ tools to Debian's. Certificates come from the suite's
# utils/gen-test-certs.sh (made once per copy). Needs tclsh, tcl-tls,
# openssl, redis-tools.
#
# The copy differs from upstream in one way, the same for both servers:
# directives of features shoal does not have (replication, modules,
# keyspace notifications, AOF-rewrite and propagation tuning) are left out
# of tests/assets/default.conf and of the TLS settings server.tcl adds
# (tls-replication, tls-cluster, tls-client-*), since shoal refuses to start
# on a directive it does not implement. With --threads N, default.conf
# gets `threads N` (shoal only).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
UPSTREAM="${UPSTREAM:-$ROOT/../shared/redis-suite/upstream}"
[ -d "$UPSTREAM" ] || UPSTREAM=/work/shared/redis-suite/upstream
SUITE_BASE="${SUITE_BASE:-${TMPDIR:-/tmp}/shoal-suite-own}"
SERVER=shoal
THREADS=""
TLS=--tls
UNITS="unit/type/string unit/type/list unit/keyspace unit/tls"
OUT=""
TIMEOUT="${UNIT_TIMEOUT:-600}"
BASEPORT="${BASEPORT:-$((27000 + RANDOM % 2000 * 4))}"
while [ $# -gt 0 ]; do
    case "$1" in
        --server) SERVER="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --units) UNITS="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --plain) TLS=""; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
case "$SERVER" in
    shoal) BIN="${SHOAL_BIN:-$ROOT/build/shoal-server}" ;;
    redis) BIN="$(command -v redis-server)" ;;
    *) echo "--server shoal|redis" >&2; exit 2 ;;
esac
[ -x "$BIN" ] || { echo "no server binary $BIN (run make)" >&2; exit 1; }
SUITE="$SUITE_BASE-$SERVER${THREADS:+-t$THREADS}"
OUT="${OUT:-$SUITE/results}"

if [ ! -f "$SUITE/tests/test_helper.tcl" ]; then
    rm -rf "$SUITE.tmp.$$" && mkdir -p "$SUITE.tmp.$$" &&
        cp -r "$UPSTREAM/." "$SUITE.tmp.$$/" && chmod -R u+w "$SUITE.tmp.$$" || exit 1
    conf="$SUITE.tmp.$$/tests/assets/default.conf"
    sed -i -E '/^(notify-keyspace-events|repl-diskless-sync-delay|slave-serve-stale-data|no-appendfsync-on-rewrite|enable-module-command|propagation-error-behavior) /d' "$conf"
    [ -n "$THREADS" ] && [ "$SERVER" = shoal ] && printf '\nthreads %s\n' "$THREADS" >>"$conf"
    sed -i -E '/dict set config "(tls-client-cert-file|tls-client-key-file|tls-cluster|tls-replication)"/d' \
        "$SUITE.tmp.$$/tests/support/server.tcl"
    rm -rf "$SUITE" && mv "$SUITE.tmp.$$" "$SUITE"
fi
mkdir -p "$SUITE/src" "$SUITE/tests/tmp" "$OUT"
ln -sf "$BIN" "$SUITE/src/redis-server"
for t in redis-cli redis-benchmark redis-check-aof redis-check-rdb; do
    ln -sf "$(command -v $t)" "$SUITE/src/$t"
done
if [ -n "$TLS" ] && [ ! -f "$SUITE/tests/tls/redis.dh" ]; then
    (cd "$SUITE" && bash utils/gen-test-certs.sh >/dev/null 2>&1) || { echo "gen-test-certs.sh failed" >&2; exit 1; }
fi

total_ok=0
total_err=0
for u in $UNITS; do
    log="$OUT/$(echo "$u" | tr / _).log"
    (cd "$SUITE" && timeout "$TIMEOUT" ./runtest $TLS --single "$u" --clients 1 --tags -slow --durable \
        --baseport "$BASEPORT" --portcount 400 >"$log" 2>&1)
    rc=$?
    plain=$(sed 's/\x1b\[[0-9;]*m//g' "$log")
    ok=$(grep -c '^\[ok\]:' <<<"$plain")
    err=$(grep -cE '^\[(err|exception)\]:' <<<"$plain")
    state=""
    [ $rc -eq 124 ] && state=" (timeout)"
    printf '%-24s ok %4d  err %3d%s\n' "$u" "$ok" "$err" "$state"
    total_ok=$((total_ok + ok))
    total_err=$((total_err + err))
done
printf 'suite %s%s %s: ok %d, err %d (logs in %s)\n' "$SERVER" "${THREADS:+ t$THREADS}" "${TLS:-plain}" \
    "$total_ok" "$total_err" "$OUT"
