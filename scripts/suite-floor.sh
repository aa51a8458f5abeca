#!/usr/bin/env bash
# Runs Redis 7.0.15's own test suite against build/shoal-server at --threads 1
# and 4 and holds every unit to its floor: the tests it passed when the floor
# was last raised (tests/compat/redis-suite-floor.tsv: unit, t1, t4). A unit
# may miss one test of its floor (the suite has timing-sensitive tests), the
# whole run two at each shard count; more fails. A unit further below runs
# once more, alone, and keeps its better count. --raise never lowers a unit.
#
#   scripts/suite-floor.sh            # check; exit 1 when a unit fell below
#   scripts/suite-floor.sh --raise    # check, then raise the floor to this run
#
# The suite is not part of the project (its licence and size): it is looked
# for in $REDIS_SUITE, then beside the checkout (../shared/redis-suite, with
# check.sh from the team's tools), then in /work/shared/redis-suite (the
# team's machines). Without it the check says so and passes.
# Takes about 9 minutes on a 2-core machine (both shard counts at once).
set -uo pipefail
cd "$(dirname "$0")/.."
FLOOR=tests/compat/redis-suite-floor.tsv
suite="${REDIS_SUITE:-}"
if [ -z "$suite" ]; then
    for d in "$(cd .. && pwd)/shared/redis-suite" /work/shared/redis-suite; do
        [ -x "$d/check.sh" ] && { suite="$d"; break; }
    done
fi
if [ ! -x "$suite/check.sh" ]; then
    echo "suite-floor: Redis's test suite not found (set REDIS_SUITE to its folder): not checked"
    exit 0
fi
raise=0
[ "${1:-}" = "--raise" ] && raise=1
out="$(mktemp -d "${TMPDIR:-/tmp}/shoal-suite.XXXXXX")"
[ -n "${SUITE_KEEP:-}" ] || trap 'rm -rf "$out"' EXIT  # SUITE_KEEP=1 keeps the logs
# Both shard counts run at once (the suite mostly waits on its own client):
# each with its own copy of the suite and its own harness port range.
for t in 1 4; do
    SUITE_DIR="$out/suite-t$t" RUNTEST_ARGS="--baseport $((21111 + 400 * t))" \
        "$suite/check.sh" --threads "$t" --out "$out/t$t" >"$out/t$t.txt" 2>&1 &
    sleep 5
done
wait
for t in 1 4; do
    tail -n 1 "$out/t$t.txt"
    [ -f "$out/t$t/summary.tsv" ] || { echo "suite-floor: no summary at t$t"; tail -n 5 "$out/t$t.txt"; exit 1; }
done
# A unit below its floor runs once more, alone at that shard count, and
# keeps the better of its two counts. Some of the suite's tests assume one
# event loop sees several connections' commands in the order they were
# sent (e.g. two deferring clients' BRPOPLPUSH, then an LPUSH, with no wait
# between them); across shards on a loaded 2-core machine the second can
# arrive first, the first then blocks for ever and the unit stops at its
# timeout. A real regression fails both runs.
check_floor() { /usr/bin/python3 - "$FLOOR" "$out/t1/summary.tsv" "$out/t4/summary.tsv" "$@" <<'EOF'
import sys
floor_path, s1, s4, mode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
raise_ = mode == "raise"

def summary(path):
    got = {}
    with open(path) as f:
        next(f)
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if cols[0] != "TOTAL":
                got[cols[0]] = int(cols[1])
    return got

now = {1: summary(s1), 4: summary(s4)}
floor = {}
try:
    with open(floor_path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            unit, t1, t4 = line.split()
            floor[unit] = {1: int(t1), 4: int(t4)}
except FileNotFoundError:
    pass
# A few of the suite's tests are timing-sensitive on a small machine: a unit
# may pass one test fewer than its floor, the whole run SLACK fewer.
SLACK = 2
if mode == "list":  # "t unit" of each unit below its floor, for the second run
    for unit, want in sorted(floor.items()):
        for t in (1, 4):
            if now[t].get(unit, 0) < want[t] - 1:
                print("%d %s" % (t, unit))
    sys.exit(0)
below, lost = [], {1: 0, 4: 0}
for unit, want in sorted(floor.items()):
    for t in (1, 4):
        have = now[t].get(unit, 0)
        if have < want[t]:
            lost[t] += want[t] - have
            print("suite-floor: %s t%d: %d, floor %d" % (unit, t, have, want[t]))
            if have < want[t] - 1:
                below.append(unit)
for t in (1, 4):
    if lost[t] > SLACK:
        below.append("t%d total" % t)
if raise_ and not below:
    units = sorted(set(now[1]) | set(now[4]) | set(floor))
    with open(floor_path, "w") as f:
        f.write("# unit, t1, t4: tests of Redis 7.0.15's suite that shoal passes; scripts/suite-floor.sh --raise\n")
        for u in units:
            old = floor.get(u, {1: 0, 4: 0})
            f.write("%s\t%d\t%d\n" % (u, max(old[1], now[1].get(u, 0)), max(old[4], now[4].get(u, 0))))
    print("suite-floor: floor raised in " + floor_path)
print("suite-floor: %d units checked, %s" % (len(floor), "below the floor: " + ", ".join(below) if below else "none below"))
sys.exit(1 if below else 0)
EOF
}
n=0
while read -r t unit; do
    n=$((n + 1))
    [ "$n" -le 4 ] || { echo "suite-floor: more than 4 units below the floor, no second runs"; break; }
    echo "suite-floor: $unit t$t below its floor: a second run"
    SUITE_DIR="$out/suite-t$t" RUNTEST_ARGS="--baseport $((23111 + 100 * n))" \
        "$suite/check.sh" --threads "$t" --units "^${unit}\$" --out "$out/again-$n" >"$out/again-$n.txt" 2>&1
    again="$(awk -F'\t' -v u="$unit" '$1 == u { print $2 }' "$out/again-$n/summary.tsv" 2>/dev/null)"
    echo "suite-floor: $unit t$t second run: ${again:-no result}"
    [ -n "$again" ] && awk -F'\t' -v OFS='\t' -v u="$unit" -v a="$again" \
        '$1 == u && a + 0 > $2 + 0 { $2 = a } { print }' "$out/t$t/summary.tsv" >"$out/t$t/summary.new" &&
        mv "$out/t$t/summary.new" "$out/t$t/summary.tsv"
done < <(check_floor list)
check_floor "$([ "$raise" = 1 ] && echo raise || echo check)"
