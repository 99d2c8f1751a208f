#!/usr/bin/env bash
# Integration: `treefarm run --trace FILE` (docs/trace.md). The reference
# fork, shortened, and a command farm with two slots on some nodes write
# Chrome trace-event JSON that is valid (every event has ph, pid, tid, ts;
# every X a dur; numbers >= 0), names all nodes and their tracks, agrees
# with results.json (compute spans per node = computed; receive spans =
# received; send spans per child = the tasks results.json says that link
# carried), and never overlaps two spans on one track. A failed run still
# writes what arrived; a path that cannot be written is refused up front.
source "$(dirname "$0")/lib.sh"

# The checker: TRACE RESULTS_JSON [--commands]. Prints what is wrong.
cat >"$WORK/check.py" <<'PY'
import json, sys
trace, results = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
commands = "--commands" in sys.argv
bad = []
def check(cond, *what):
    if not cond:
        bad.append(" ".join(str(w) for w in what))
assert isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list), "no traceEvents"
check(trace.get("displayTimeUnit") == "ms", "displayTimeUnit", trace.get("displayTimeUnit"))
check("time_scale" in trace["otherData"] and "platform" in trace["otherData"]["time_base"],
      "otherData does not say the time base")
procs, tracks, spans = {}, {}, {}
for e in trace["traceEvents"]:
    for k in ("ph", "pid", "tid", "ts"):
        check(k in e, "event without", k, e)
    check(isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, "bad ts", e)
    if e.get("ph") == "M" and e.get("name") == "process_name":
        procs[e["pid"]] = e["args"]["name"]
    elif e.get("ph") == "M" and e.get("name") == "thread_name":
        tracks[(e["pid"], e["tid"])] = e["args"]["name"]
    elif e.get("ph") == "X":
        check(isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, "bad dur", e)
        spans.setdefault((e["pid"], e["tid"]), []).append(e)
    else:
        check(e.get("ph") == "M", "unexpected event", e)
nodes = results["nodes"]
check(sorted(procs.values()) == sorted(n["name"] for n in nodes),
      "process names", sorted(procs.values()))
pid = {name: p for p, name in procs.items()}
for key in spans:
    check(key in tracks, "spans on an unnamed track", key)
def named(node, name):
    return [k for k, v in tracks.items() if k[0] == pid[node] and v == name]
def tasks_on(key, cat):
    return [e for e in spans.get(key, []) if e["cat"] == cat]
for n in nodes:
    name = n["name"]
    slots = n["slots"] if commands else 1
    ctracks = named(name, "compute") if slots == 1 else \
        [k for s in range(slots) for k in named(name, "compute slot %d" % s)]
    check(len(ctracks) == slots, name, "compute tracks", ctracks)
    computed = sum(len(tasks_on(k, "compute")) for k in ctracks)
    check(computed == n["computed"], name, "compute spans", computed, "computed", n["computed"])
    recv = named(name, "receive")
    if n["parent"] is None:
        check(recv == [], name, "root has a receive track")
    else:
        check(len(recv) == 1, name, "receive track", recv)
        got = sum(len(tasks_on(k, "receive")) for k in recv)
        check(got == n["received"], name, "receive spans", got, "received", n["received"])
    for c in n.get("children") or []:
        send = named(name, "send \u2192 " + c["name"])
        check(len(send) == 1 or c["tasks"] == 0, name, "send track to", c["name"], send)
        got = sum(len(tasks_on(k, "send")) for k in send)
        check(got == c["tasks"], name, "->", c["name"], "send spans", got, "tasks", c["tasks"])
    idle = sum(len(tasks_on(k, "idle")) for k in ctracks)
    check(idle > 0, name, "no idle span on its compute tracks")
# One track: no two spans (idle included) overlap (1 ns of rounding).
for key, es in spans.items():
    es = sorted(es, key=lambda e: e["ts"])
    for a, b in zip(es, es[1:]):
        check(a["ts"] + a["dur"] <= b["ts"] + 1e-3, procs[key[0]], tracks.get(key),
              "overlap", a["name"], a["ts"], a["dur"], b["name"], b["ts"])
if commands:
    used = [k for k, v in tracks.items() if v == "compute slot 1" and tasks_on(k, "compute")]
    check(used, "no node used its second slot")
for b in bad[:10]:
    print("   ", b)
sys.exit(1 if bad else 0)
PY

# --- the reference fork, 200 tasks at time scale 40 -----------------------
sed -e 's/"count": *[0-9]*/"count": 200/; s/"time_scale": *[0-9.]*/"time_scale": 40/' \
    configs/fork7.json >"$WORK/fork7.json"
"$TREEFARM" run "$WORK/fork7.json" --out "$WORK/fork" --quiet --trace "$WORK/fork.trace.json" \
    >"$WORK/fork.out" 2>"$WORK/fork.err"
rc=$?
expect "fork7 --trace: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -5 "$WORK/fork.err"
expect "fork7: the terminal names the trace" grep -q "^trace: $WORK/fork.trace.json" "$WORK/fork.out"
expect "fork7: valid trace-event JSON, tracks and spans agree with results.json" \
    python3 "$WORK/check.py" "$WORK/fork.trace.json" "$WORK/fork/results.json"
expect "fork7: no temporary file left" test -z "$(ls -A "$WORK" | grep '\.tmp$')"

# --- commands on farm5, two slots on w2 and w1a ---------------------------
mkdir -p "$WORK/in"
for i in $(seq 40); do echo "$i" >"$WORK/in/f$i.txt"; done
sed -e 's/"name": "w2",/"name": "w2", "slots": 2,/; s/"name": "w1a",/"name": "w1a", "slots": 2,/' \
    configs/farm5.json >"$WORK/farm5.json"
# The trace inside the results directory, which does not exist yet: the
# run makes it before anything starts.
"$TREEFARM" run "$WORK/farm5.json" --out "$WORK/cmd" --quiet --trace "$WORK/cmd/trace.json" \
    --command 'sleep 0.05; cat {}' --inputs "$WORK/in/*.txt" >"$WORK/cmd.out" 2>"$WORK/cmd.err"
rc=$?
expect "farm5 commands --trace in the new --out directory: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -5 "$WORK/cmd.err"
expect "farm5: a compute track per slot, spans agree with results.json" \
    python3 "$WORK/check.py" "$WORK/cmd/trace.json" "$WORK/cmd/results.json" --commands

# --- a failed run still writes what arrived -------------------------------
sed -e 's/"count": *[0-9]*/"count": 5000/; s/"time_scale": *[0-9.]*/"time_scale": 40/' \
    configs/fork7.json >"$WORK/long.json"
"$TREEFARM" run "$WORK/long.json" --out "$WORK/long" --quiet --timeout 1 \
    --trace "$WORK/long.trace.json" >"$WORK/long.out" 2>"$WORK/long.err"
rc=$?
expect "a run that times out: exit 1 (got $rc)" test "$rc" = 1
expect "a failed run: its trace is valid, says failed, and has spans" python3 - \
    "$WORK/long.trace.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
assert t["otherData"]["status"] == "failed", t["otherData"]["status"]
x = [e for e in t["traceEvents"] if e["ph"] == "X" and e["cat"] == "compute"]
assert len(x) > 0 and all(e["ts"] >= 0 and e["dur"] >= 0 for e in x)
PY

# --- paths that cannot be written, refused before anything starts --------
"$TREEFARM" run "$WORK/fork7.json" --out "$WORK/nodir" --quiet \
    --trace "$WORK/no/such/dir/t.json" >/dev/null 2>"$WORK/nodir.err"
rc=$?
expect "--trace in a missing directory: exit 2 (got $rc)" test "$rc" = 2
expect "--trace in a missing directory: the message names it" \
    grep -q -- "--trace $WORK/no/such/dir/t.json: .*No such file" "$WORK/nodir.err"
expect "--trace in a missing directory: no run started" test ! -e "$WORK/nodir"
"$TREEFARM" run "$WORK/fork7.json" --out "$WORK/isdir" --quiet --trace "$WORK" \
    >/dev/null 2>"$WORK/isdir.err"
rc=$?
expect "--trace DIRECTORY: exit 2 (got $rc)" test "$rc" = 2
expect "--trace DIRECTORY: says so" grep -q "is a directory" "$WORK/isdir.err"
expect "treefarm run --help lists --trace" sh -c "'$TREEFARM' run --help | grep -q -- '--trace FILE'"

finish
