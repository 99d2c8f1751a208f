#!/usr/bin/env bash
# Integration: a root that only relays ("slots": 0, docs/config.md
# "Relays"). fork7 with Lab0 a relay runs 300 synthetic tasks: each once,
# none on Lab0, judged against the relay tree's bound, the summary saying
# relay; command tasks under a relay head all come back, and a failing
# command's retries go to the other workers, never to the head; what a
# relay cannot do yet is refused with exit 2 naming the node.
source "$(dirname "$0")/lib.sh"

python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
for src, dst, tasks in (("configs/fork7.json", "relay7.json", 300),
                        ("configs/farm5.json", "farm5r.json", None)):
    c = json.load(open(src))
    root = c["tree"][0]
    del root["compute"]
    root["slots"] = 0
    if tasks:
        c["tasks"]["count"] = tasks
    json.dump(c, open("%s/%s" % (work, dst), "w"), indent=1)
lone = {"tasks": {"count": 5, "input_mb": 1, "units": 1}, "tree": [{"name": "lone", "slots": 0}]}
json.dump(lone, open(work + "/lone.json", "w"))
PY

# --- fork7, Lab0 a relay: 300 synthetic tasks ------------------------------
CFG=$WORK/relay7.json
out=$WORK/f7
"$TREEFARM" run "$CFG" --quiet --out "$out" >"$WORK/f7.out" 2>"$WORK/f7.err"
rc=$?
expect "fork7, relay root, 300 tasks: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -5 "$WORK/f7.err"
expect "fork7 relay: every task exactly once" tasks_exactly_once "$out" 300
expect "fork7 relay: computed adds up, no duplicate" computed_sums_to "$out" 300
expect "fork7 relay: Lab0 computed 0, is marked relay, C configured 0" python3 - "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/results.json"))
root = [x for x in r["nodes"] if x["name"] == "Lab0"][0]
ok = (root["computed"] == 0 and root["relay"] is True and root["compute_configured"] == 0
      and root["forwarded"] == 300 and root["copies"] == 0
      and all(x["relay"] is False for x in r["nodes"] if x["name"] != "Lab0"))
if not ok: print("  Lab0:", {k: root[k] for k in ("computed", "relay", "compute_configured", "forwarded", "copies")})
sys.exit(0 if ok else 1)
PY
"$TREEFARM" bound "$CFG" --json >"$WORK/bound.json"
expect "fork7 relay: judged against the relay tree's bound, efficiency <= 1" python3 - "$out" "$WORK/bound.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/results.json"))
b = json.load(open(sys.argv[2]))["bound"]
ok = abs(r["bound"]["tasks_per_s"] - b) <= 1e-9 * b and abs(b - 10.7 / 2) < 1e-9
ok = ok and r["bound"]["agree"] and 0 < r["efficiency"] <= 1
if not ok: print("  bound", r["bound"], "offline", b, "efficiency", r["efficiency"])
sys.exit(0 if ok else 1)
PY
expect "fork7 relay: the summary says Lab0 is a relay" grep -q "^  Lab0 (relay) " "$WORK/f7.out"
expect "fork7 relay: no node process outlives the run" no_node_alive "$out"

# --- command tasks under a relay head --------------------------------------
CFG=$WORK/farm5r.json
mkdir -p "$WORK/data"
for i in $(seq 40); do seq $((i * 500)) >"$WORK/data/p$i.txt"; done
out=$WORK/gz
"$TREEFARM" run "$CFG" --quiet --out "$out" --command 'gzip -9 -n -c {} > {/}.gz' \
    --inputs "$WORK/data/*.txt" >"$WORK/gz.out" 2>"$WORK/gz.err"
rc=$?
expect "gzip under a relay head: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -5 "$WORK/gz.err"
expect "gzip relay: every task recorded exactly once" tasks_exactly_once "$out" 40 commands
expect "gzip relay: every output present and equal to gzip's, none run on the head" \
    python3 - "$WORK/data" "$out" <<'PY'
import csv, gzip, os, sys
data, out = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(os.path.join(out, "tasks.csv"))))
files = sorted(os.listdir(data))
bad = [r["id"] for r in rows if r["status"] != "ok" or r["node"] == "head"]
for r in rows:
    name = files[int(r["id"]) - 1]
    got = os.path.join(out, "tasks", r["id"], name + ".gz")
    if not os.path.exists(got) or gzip.open(got).read() != open(os.path.join(data, name), "rb").read():
        bad.append(r["id"])
if bad or len(rows) != 40: print("  bad:", bad[:5], "rows", len(rows))
sys.exit(1 if bad or len(rows) != 40 else 0)
PY

# A command that fails everywhere but on w1b: retried on the other workers
# until it lands there, never on the head (which would hold it for ever).
# (Without {}, the input's path is appended: where.txt reads "w1b pN.txt".)
out=$WORK/picky
timeout 120 "$TREEFARM" run "$CFG" --quiet --out "$out" --retries 4 \
    --command '[ "$TREEFARM_NODE" = w1b ] || exit 3; echo "$TREEFARM_NODE" > where.txt' \
    --inputs "$WORK/data/p1*.txt" >"$WORK/picky.out" 2>"$WORK/picky.err"
rc=$?
expect "picky commands under a relay head: exit 0 (got $rc)" test "$rc" = 0
expect "picky: every command ends ok on w1b, its output there" python3 - "$out" <<'PY'
import csv, os, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "tasks.csv"))))
bad = [r for r in rows if r["status"] != "ok" or r["node"] != "w1b"
       or open(os.path.join(out, "tasks", r["id"], "where.txt")).read().split()[0] != "w1b"]
if bad or len(rows) != 11: print("  bad:", bad[:3], "rows", len(rows))
sys.exit(1 if bad or len(rows) != 11 else 0)
PY
expect "picky: no retry went to the head" bash -c '! grep -q "failed on head" "$1"' _ "$WORK/picky.err"

# A command that fails everywhere: once every worker has failed it, the
# nodes it avoids are cleared (the head is none of them) and it goes on
# until its last attempt; the run ends, exit 1, instead of holding it.
out=$WORK/doomed
timeout 120 "$TREEFARM" run "$CFG" --quiet --out "$out" --retries 5 --command 'exit 3' \
    --inputs "$WORK/data/p1*.txt" >"$WORK/doomed.out" 2>"$WORK/doomed.err"
rc=$?
expect "doomed commands under a relay head: the run ends, exit 1 (got $rc)" test "$rc" = 1
expect "doomed: each failed after 6 attempts on the workers, the head ran nothing" \
    python3 - "$out" <<'PY'
import csv, json, os, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "tasks.csv"))))
head = [x for x in json.load(open(os.path.join(out, "results.json")))["nodes"] if x["name"] == "head"][0]
bad = [r for r in rows if r["status"] != "failed" or r["attempts"] != "6" or r["node"] == "head"]
ok = not bad and len(rows) == 11 and head["computed"] == 0 and head["slots"] == 0
if not ok: print("  bad:", bad[:3], "rows", len(rows), "head computed", head["computed"], "slots", head["slots"])
sys.exit(0 if ok else 1)
PY

# --- what a relay cannot do yet: exit 2, naming the node ------------------
refused () {   # what pattern command... (accepted, some would run for ever)
    local what=$1 pattern=$2 rc
    shift 2
    timeout 60 "$@" >"$WORK/refused.out" 2>&1
    rc=$?
    expect "$what: exit 2 (got $rc)" test "$rc" = 2
    expect "$what: says why" grep -q "$pattern" "$WORK/refused.out"
}
refused "relay with no children" 'lone.json: tree\[0\] (node "lone"): slots: a relay ("slots": 0) computes nothing and has no children' \
    "$TREEFARM" run "$WORK/lone.json" --out "$WORK/lone"
refused "root-computes with a relay root" 'policy root-computes computes every task on the root, and tree\[0\] (node "Lab0") is a relay' \
    "$TREEFARM" run "$WORK/relay7.json" --policy root-computes --out "$WORK/rc"
refused "bench of root-computes with a relay root" 'policy root-computes computes every task on the root, and tree\[0\] (node "Lab0") is a relay' \
    "$TREEFARM" bench "$WORK/relay7.json" --policies root-computes,fcfs --send 2 --compute 5 --out "$WORK/bench"
refused "--adapt with a relay root" 'tree\[0\] (node "Lab0") is a relay ("slots": 0): a run with a relay does not adapt yet' \
    "$TREEFARM" run "$WORK/relay7.json" --adapt --out "$WORK/ad"
if [ -x "$BUILD/bin/treefarm-sim" ]; then
    refused "simulate with a relay root" 'tree\[0\] (node "Lab0") is a relay ("slots": 0): relays are not simulated yet' \
        "$TREEFARM" simulate "$WORK/relay7.json"
else
    skip_part "treefarm simulate's refusal: no treefarm-sim (SimGrid) in this build"
fi

finish
