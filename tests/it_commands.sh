#!/usr/bin/env bash
# Integration: command tasks on a 3-level tree of real processes (issue
# 11). Inputs go down as bundles, outputs come back up and are checked by
# sha256 against the same commands run directly; failures are reported
# and retried elsewhere; a controller killed with SIGKILL is resumed and
# every task ends done exactly once; a bad tasks file names its line.
source "$(dirname "$0")/lib.sh"
CFG=configs/farm5.json

# --- 500 files through gzip, every output checked ------------------------
mkdir -p "$WORK/data"
python3 - "$WORK/data" <<'PY'
import os, random, sys
random.seed(11)
for i in range(500):
    n = random.randint(0, 64 * 1024)
    words = [random.choice(["alpha", "beta", "gamma", "delta", "tree", "farm"]) for _ in range(n // 6)]
    open(os.path.join(sys.argv[1], "f%03d.txt" % i), "w").write(" ".join(words))
PY
out=$WORK/gz
"$TREEFARM" run "$CFG" --quiet --out "$out" --command 'gzip -9 -n -c {} > {/}.gz' \
    --inputs "$WORK/data/*.txt" >"$WORK/gz.out" 2>"$WORK/gz.err"
rc=$?
expect "gzip over 500 files: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -5 "$WORK/gz.err"
expect "gzip: every task recorded exactly once" tasks_exactly_once "$out" 500 commands
expect "gzip: every output equals gzip run directly (sha256)" python3 - "$WORK/data" "$out" <<'PY'
import csv, gzip, hashlib, os, subprocess, sys
data, out = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(os.path.join(out, "tasks.csv"))))
files = sorted(os.listdir(data))
bad = 0
for r in rows:
    name = files[int(r["id"]) - 1]
    got = open(os.path.join(out, "tasks", r["id"], name + ".gz"), "rb").read()
    want = subprocess.run(["gzip", "-9", "-n", "-c", os.path.join(data, name)],
                          capture_output=True, check=True).stdout
    if hashlib.sha256(got).digest() != hashlib.sha256(want).digest() or r["status"] != "ok":
        bad += 1
        if bad < 5: print("  task", r["id"], name, "differs or failed:", r["status"])
sys.exit(1 if bad or len(rows) != 500 else 0)
PY
expect "gzip: computed at least once below the root" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/tasks.csv")))
sys.exit(0 if any(r["node"] in ("w1a", "w1b") for r in rows) else 1)' "$out"
expect "gzip: empty stdout and stderr are not kept" test ! -e "$out/tasks/1/stdout" -a ! -e "$out/tasks/1/stderr"
expect "gzip: no node process outlives the run" no_node_alive "$out"

# --- failures, a timeout, a retry on another node ------------------------
cat >"$WORK/mixed.jsonl" <<'JL'
{"id": "ok1", "sh": "echo fine > note.txt"}
{"id": "exit3", "sh": "echo broken >&2; exit 3"}
{"id": "slow", "sh": "sleep 30", "timeout_s": 0.5}
{"id": "picky", "sh": "[ \"$TREEFARM_NODE\" != head ] || { echo not on the head >&2; exit 7; }; echo done > where.txt; echo $TREEFARM_NODE >> where.txt", "outputs": ["where.txt"]}
{"id": "ok2", "argv": ["sh", "-c", "printf '%s' \"$GREETING\" > g.txt"], "env": {"GREETING": "hello there"}}
JL
out=$WORK/mixed
"$TREEFARM" run "$CFG" --quiet --out "$out" --tasks "$WORK/mixed.jsonl" --policy root-computes \
    >"$WORK/mixed.out" 2>"$WORK/mixed.err"
rc=$?
expect "mixed: exit 1 when a command failed (got $rc)" test "$rc" = 1
expect "mixed: every task recorded exactly once" tasks_exactly_once "$out" 5 commands
expect "mixed: the summary names the failed tasks" \
    grep -q "failed.*exit3.*slow\|failed.*slow.*exit3" "$WORK/mixed.out"
expect "mixed: statuses, attempts and stderr tails" python3 - "$out" <<'PY'
import csv, json, sys
out = sys.argv[1]
rows = {r["id"]: r for r in csv.DictReader(open(out + "/tasks.csv"))}
r = json.load(open(out + "/results.json"))
fails = {f["id"]: f for f in r["failures"]}
ok = (rows["ok1"]["status"] == "ok" and rows["exit3"]["status"] == "failed"
      and rows["exit3"]["exit"] == "3" and rows["exit3"]["attempts"] == "3"
      and rows["slow"]["status"] == "failed" and fails["slow"]["timed_out"] is True
      and "broken" in fails["exit3"]["stderr_tail"] and r["failed"] == 3
      and rows["ok2"]["status"] == "ok"
      and open(out + "/tasks/ok2/g.txt").read() == "hello there"
      and open(out + "/tasks/ok1/note.txt").read() == "fine\n"
      and open(out + "/tasks/exit3/stderr").read() == "broken\n")
if not ok: print("  rows", rows, "failures", list(fails))
sys.exit(0 if ok else 1)
PY
expect "mixed: picky failed on the head, ran once more there (root-computes)" python3 - "$out" <<'PY'
import csv, sys
rows = {r["id"]: r for r in csv.DictReader(open(sys.argv[1] + "/tasks.csv"))}
sys.exit(0 if rows["picky"]["status"] == "failed" and rows["picky"]["attempts"] == "3" else 1)
PY
out=$WORK/mixed2
"$TREEFARM" run "$CFG" --quiet --out "$out" --tasks "$WORK/mixed.jsonl" --policy fcfs \
    >"$WORK/mixed2.out" 2>"$WORK/mixed2.err"
expect "mixed, fcfs: picky failed on the head and succeeded on another node" python3 - "$out" <<'PY'
import csv, sys
rows = {r["id"]: r for r in csv.DictReader(open(sys.argv[1] + "/tasks.csv"))}
p = rows["picky"]
where = open(sys.argv[1] + "/tasks/picky/where.txt").read().split()
ok = p["status"] == "ok" and p["node"] != "head" and where == ["done", p["node"]]
if not ok: print("  picky:", p, where)
sys.exit(0 if ok else 1)
PY

# --- an input deleted during the run: that task fails, the rest go on -----
# Task g00 deletes the last task's input; every other task waits for that
# before it ends, so the last one is handed out only after the deletion
# (the tree holds far fewer than 59 tasks at once).
mkdir -p "$WORK/gone"
python3 - "$WORK/gone" >"$WORK/gone.jsonl" <<'PY'
import json, os, sys
d = sys.argv[1]
for i in range(60):
    p = os.path.join(d, "f%02d.txt" % i)
    open(p, "w").write("data %d\n" % i)
    victim = os.path.join(d, "f59.txt")
    sh = ("rm -f %s; cat f00.txt" % victim if i == 0 else
          "n=0; while [ -e %s ] && [ $n -lt 1000 ]; do sleep 0.01; n=$((n+1)); done; "
          "cat f%02d.txt" % (victim, i))
    print(json.dumps({"id": "g%02d" % i, "sh": sh, "inputs": [p]}))
PY
out=$WORK/gone-run
"$TREEFARM" run "$CFG" --quiet --out "$out" --tasks "$WORK/gone.jsonl" \
    >"$WORK/gone.out" 2>"$WORK/gone.err"
rc=$?
expect "input deleted mid-run: the run completes, exit 1 for the failed task (got $rc)" \
    test "$rc" = 1
expect "input deleted mid-run: every task recorded exactly once" \
    tasks_exactly_once "$out" 60 commands
expect "input deleted mid-run: only g59 failed, at the root, saying which file" \
    python3 - "$out" "$WORK/gone/f59.txt" <<'PY'
import csv, json, sys
out, victim = sys.argv[1], sys.argv[2]
rows = {r["id"]: r for r in csv.DictReader(open(out + "/tasks.csv"))}
fails = {f["id"]: f for f in json.load(open(out + "/results.json"))["failures"]}
v = rows["g59"]
ok = (v["status"] == "failed" and v["node"] == "head" and v["attempts"] == "3"
      and v["bytes_in"] == "0" and list(fails) == ["g59"]
      and fails["g59"].get("error") == "input: %s: No such file or directory" % victim
      and all(r["status"] == "ok" for i, r in rows.items() if i != "g59")
      and len(rows) == 60)
if not ok: print("  g59:", v, "failures:", fails)
sys.exit(0 if ok else 1)
PY
expect "input deleted mid-run: the summary names it" grep -q "failed: 1 of 60.*g59" "$WORK/gone.out"

# --- synthetic and command tasks in one run ---------------------------------
python3 - "$CFG" "$WORK/mixedbag.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["tasks"] = {"count": 30, "input_mb": 0.1, "units": 2}
json.dump(c, open(sys.argv[2], "w"))
PY
out=$WORK/both
"$TREEFARM" run "$WORK/mixedbag.json" --quiet --out "$out" --command 'wc -c {}' \
    --inputs "$WORK/data/f0*.txt" >"$WORK/both.out" 2>"$WORK/both.err"
rc=$?
expect "synthetic and commands together: exit 0 (got $rc)" test "$rc" = 0
expect "synthetic and commands together: all 130 tasks once" tasks_exactly_once "$out" 130 commands
expect "synthetic and commands together: 100 command rows with ids, 30 synthetic" python3 - "$out" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/tasks.csv")))
cmd = [r for r in rows if r["id"]]
syn = [r for r in rows if not r["id"]]
ok = len(cmd) == 100 and len(syn) == 30 and all(int(r["task"]) >= 100 for r in syn)
sys.exit(0 if ok else 1)
PY

# --- kill -9 of the controller, then --resume ----------------------------
out=$WORK/resume
"$TREEFARM" run "$CFG" --quiet --out "$out" --command 'sleep 0.05; wc -c < {} > {/}.n' \
    --inputs "$WORK/data/*.txt" >"$WORK/r1.out" 2>"$WORK/r1.err" &
ctl=$!
# Killed once the journal has 100 records and tasks.csv (flushed every
# second) shows some tasks done.
for _ in $(seq 100); do
    [ -s "$out/journal.jsonl" ] && [ "$(wc -l <"$out/journal.jsonl")" -ge 100 ] \
        && [ -s "$out/tasks.csv" ] && [ "$(wc -l <"$out/tasks.csv")" -ge 20 ] && break
    sleep 0.1
done
nodes=$(children_of "$ctl")
kill -9 "$ctl"; wait "$ctl" 2>/dev/null
done1=$(wc -l <"$out/journal.jsonl")
expect "resume: the first run journaled some tasks before the kill ($done1)" \
    test "$done1" -ge 1 -a "$done1" -lt 500
# SIGKILL by PDEATHSIG is at once, but a process in the middle of disk
# I/O (state D) dies only when that returns: allow 5 s.
for _ in $(seq 50); do
    alive=0
    for p in $nodes; do   # a zombie left to init is dead
        kill -0 "$p" 2>/dev/null && [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ] \
            && alive=$((alive + 1))
    done
    [ "$alive" = 0 ] && break
    sleep 0.1
done
for p in $nodes; do
    if kill -0 "$p" 2>/dev/null && [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ]; then
        echo "  still alive: $p $(ps -o stat=,args= -p "$p")"
    fi
done
expect "resume: no node outlives a killed controller" test "$alive" = 0
expect "resume: every task the killed run showed done (tasks.csv) is in its journal" \
    python3 - "$out" <<'PY'
import csv, json, sys
out = sys.argv[1]
text = open(out + "/tasks.csv").read()
text = text[:text.rfind("\n") + 1]   # a row cut by the kill is not shown
shown = {r["id"] for r in csv.DictReader(text.splitlines())}
kept = set()
for line in open(out + "/journal.jsonl"):
    if line.endswith("\n"):
        kept.add(json.loads(line)["id"])
lost = sorted(shown - kept)
if lost: print("  %d shown done, not journaled: %s" % (len(lost), lost[:5]))
sys.exit(1 if lost or not shown else 0)
PY
"$TREEFARM" run "$CFG" --quiet --out "$out" --resume >"$WORK/r2.out" 2>"$WORK/r2.err"
rc=$?
expect "resume: the resumed run exits 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -5 "$WORK/r2.err"
expect "resume: every task exactly once in tasks.csv" tasks_exactly_once "$out" 500 commands
expect "resume: every task exactly once in the journal, each output there" python3 - "$out" "$WORK/data" <<'PY'
import json, os, sys
out, data = sys.argv[1], sys.argv[2]
ids = [json.loads(l)["id"] for l in open(out + "/journal.jsonl")]
files = sorted(os.listdir(data))
miss = [i for i in ids if not os.path.exists("%s/tasks/%s/%s.n" % (out, i, files[int(i) - 1]))]
ok = len(ids) == 500 and len(set(ids)) == 500 and not miss
if not ok: print("  journal", len(ids), "distinct", len(set(ids)), "missing outputs", miss[:5])
sys.exit(0 if ok else 1)
PY
expect "resume: said how many were done" grep -q "resuming: .* tasks are done already" "$WORK/r2.err"
left=0
for p in $nodes; do   # the killed nodes' scratch, swept by the next nodes
    for d in "${TMPDIR:-/tmp}"/treefarm-*-"$p".??????; do [ -e "$d" ] && left=$((left + 1)); done
done
expect "resume: no scratch directory of the killed nodes is left ($left)" test "$left" = 0
expect "resume: results.json counts the $done1 resumed tasks, and its efficiency is this run's" \
    python3 - "$out/results.json" "$done1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["resumed"] == int(sys.argv[2]) and (r["efficiency"] is None or r["efficiency"] < 2)
if not ok: print("  resumed", r["resumed"], "efficiency", r["efficiency"])
sys.exit(0 if ok else 1)
PY

# --- a controller that falls silent (stopped, as if cut off) --------------
"$TREEFARM" run "$CFG" --quiet --out "$WORK/silent" --command 'sleep 0.2; true' \
    --inputs "$WORK/data/*.txt" >/dev/null 2>"$WORK/silent.err" &
ctl=$!
sleep 1.5
nodes=$(children_of "$ctl")
kill -STOP "$ctl"
t0=$(date +%s.%N)
gone=0
for _ in $(seq 150); do
    alive=0
    for p in $nodes; do
        kill -0 "$p" 2>/dev/null && [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ] && alive=$((alive + 1))
    done
    [ "$alive" = 0 ] && { gone=1; break; }
    sleep 0.1
done
took=$(python3 -c "import sys,time; print('%.1f' % (time.time() - float(sys.argv[1])))" "$t0")
kill -9 "$ctl"; kill -CONT "$ctl" 2>/dev/null; wait "$ctl" 2>/dev/null
expect "silence: every node exits on its own within 15 s of its controller stopping (${took} s)" \
    test "$gone" = 1

# --- the environment: the nodes' allocator, the commands' own ---------------
# The controller starts every node with glibc's tcache off
# (GLIBC_TUNABLES, overlay/util.h); a node puts the user's environment back
# for its commands. A wrapper records each node's environment as it is
# started (not /proc/PID/environ: glibc rewrites the text it parses in
# place), each command its own. Run twice: with GLIBC_TUNABLES unset, and
# with the user's own value.
python3 - "$WORK/env.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(10):
        f.write(json.dumps({"id": "e%d" % i, "sh":
            "env | grep -E '^(GLIBC_TUNABLES|TREEFARM_MALLOC_TUNED)=' >own.txt; true"}) + "\n")
PY
printf '%s\n' '#!/bin/sh' "env | grep -E '^(GLIBC_TUNABLES|TREEFARM_MALLOC_TUNED)=' | sort >\"\$NODE_ENV_DIR/\$\$\"" \
    'exec "$@"' >"$WORK/envwrap.sh"
for user in "" "glibc.malloc.perturb=0"; do
    out=$WORK/env-${user:-unset}
    mkdir -p "$out.nodes"
    if [ -n "$user" ]; then tunables=(GLIBC_TUNABLES="$user"); else tunables=(-u GLIBC_TUNABLES); fi
    env "${tunables[@]}" NODE_ENV_DIR="$out.nodes" TREEFARM_NODE_WRAPPER="sh $WORK/envwrap.sh" \
        "$TREEFARM" run "$CFG" --quiet --out "$out" --tasks "$WORK/env.jsonl" \
        >"$out.out" 2>"$out.err"
    rc=$?
    expect "environment (GLIBC_TUNABLES ${user:-unset}): exit 0 (got $rc)" test "$rc" = 0
    expect "environment (GLIBC_TUNABLES ${user:-unset}): every node started with tcache off; every command saw the user's environment" \
        python3 - "$out" "$user" <<'PY'
import os, sys
out, user = sys.argv[1], sys.argv[2]
want_node = ("GLIBC_TUNABLES=" + (user + ":" if user else "") + "glibc.malloc.tcache_count=0\n"
             "TREEFARM_MALLOC_TUNED=1\n")
want_own = "GLIBC_TUNABLES=%s\n" % user if user else ""
bad = []
nodes = os.listdir(out + ".nodes")
if len(nodes) != 5:
    bad.append("%d nodes recorded, not 5" % len(nodes))
for n in nodes:
    got = open(os.path.join(out + ".nodes", n)).read()
    if got != want_node:
        bad.append("a node started with %r" % got)
for i in range(10):
    got = open(os.path.join(out, "tasks", "e%d" % i, "own.txt")).read()
    if got != want_own:
        bad.append("e%d ran with %r" % (i, got))
for b in bad[:5]:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
done

# --- a worker reuses its stdout and stderr files: nothing carries over -------
# One node, one slot: its worker alternates between its two work
# directories, so c runs where a ran and d where b ran. What a and b
# wrote must not appear in c's or d's outputs (c writes nothing at all,
# so it gets no directory).
cat >"$WORK/solo.json" <<'EOF2'
{"name": "solo", "policy": "fcfs", "platform": {"mode": "real"},
 "tree": [{"name": "root", "compute": 100, "slots": 1}]}
EOF2
cat >"$WORK/reuse.jsonl" <<'EOF2'
{"id": "a", "sh": "echo aaaaaaaaaaaaaaaa; echo AAAAAAAAAAAAAAAA >&2"}
{"id": "b", "sh": "echo bbbbbbbbbbbbbbbb; echo BBBBBBBBBBBBBBBB >&2"}
{"id": "c", "argv": ["true"]}
{"id": "d", "sh": "echo d"}
EOF2
"$TREEFARM" run "$WORK/solo.json" --quiet --out "$WORK/reuse" --tasks "$WORK/reuse.jsonl" \
    >/dev/null 2>"$WORK/reuse.err"
expect "reused output files: exit 0, every task once" tasks_exactly_once "$WORK/reuse" 4 commands
expect "reused output files: each task has only its own stdout and stderr" sh -c "
    [ ! -e '$WORK/reuse/tasks/c' ] && [ \"\$(cat '$WORK/reuse/tasks/d/stdout')\" = d ] &&
    [ ! -e '$WORK/reuse/tasks/d/stderr' ] &&
    [ \"\$(cat '$WORK/reuse/tasks/b/stderr')\" = BBBBBBBBBBBBBBBB ]"

# --- a bad tasks file -------------------------------------------------------
printf '{"id": "a", "sh": "true"}\n{"id": "b", "argv": "true"}\n' >"$WORK/bad.jsonl"
"$TREEFARM" run "$CFG" --quiet --out "$WORK/bad" --tasks "$WORK/bad.jsonl" \
    >"$WORK/bad.out" 2>"$WORK/bad.err"
rc=$?
expect "bad tasks file: exit 2 (got $rc)" test "$rc" = 2
expect "bad tasks file: names line 2 and field argv" grep -q "bad.jsonl:2: field 'argv'" "$WORK/bad.err"
"$TREEFARM" run "$CFG" --quiet --out "$WORK/none" >"$WORK/none.out" 2>"$WORK/none.err"
expect "no tasks at all: exit 2 naming what to give" grep -q "give --tasks FILE or --command" "$WORK/none.err"

# --- a run that fails before any command ran: its summary has no bound -----
printf '{"id": "a", "sh": "true"}\n' >"$WORK/one.jsonl"
"$TREEFARM" run "$CFG" --out "$WORK/early" --tasks "$WORK/one.jsonl" --node-bin /bin/false \
    >"$WORK/early.out" 2>"$WORK/early.err"
rc=$?
expect "nodes that cannot start: exit 1 (got $rc)" test "$rc" = 1
expect "nodes that cannot start: the summary says there is no bound, and why" \
    grep -q "bound: none (it rests on the commands' measured times, and none finished)" \
    "$WORK/early.out"
expect "nodes that cannot start: no 'nan' anywhere in the summary" \
    sh -c "! grep -qi nan '$WORK/early.out'"

finish
