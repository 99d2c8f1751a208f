#!/usr/bin/env bash
# Integration: tasks.csv is written as the run goes, and a disk that fills
# up is a clear error. Every run here is under `ulimit -f`: without it a
# run that streams rows could fill this machine's disk.
source "$(dirname "$0")/lib.sh"

# Thousands of tiny tasks, quickly: no payload, tiny compute, time scale
# high; long node names make the rows long.
cat >"$WORK/many.json" <<'JSON'
{"tasks": {"count": 20000, "input_mb": 0, "units": 0.001},
 "platform": {"time_scale": 1000},
 "tree": [{"name": "root-of-the-tree", "compute": 1000},
  {"name": "first-worker-with-a-long-name", "parent": "root-of-the-tree", "compute": 1000, "link_mbps": 100},
  {"name": "second-worker-with-a-long-name", "parent": "root-of-the-tree", "compute": 1000, "link_mbps": 100}]}
JSON

# A file size limit of 32 KiB: tasks.csv (about 30 bytes a row) hits it
# after about a thousand rows; results.json (a few KiB) fits.
( ulimit -f 32; exec "$TREEFARM" run "$WORK/many.json" --out "$WORK/full" --quiet ) \
    >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "disk full: exit 1 (got $rc)" test "$rc" = 1
expect "disk full: the error names tasks.csv and the reason" \
    grep -q "cannot write $WORK/full/tasks.csv: File too large" "$WORK/e"
expect "disk full: results.json parses and says failed" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["status"] == "failed" and "tasks.csv" in r["error"] else 1)' "$WORK/full/results.json"
expect "disk full: no node process outlives the run" no_node_alive "$WORK/full"
size=$(stat -c %s "$WORK/full/tasks.csv")
expect "disk full: tasks.csv stopped at the limit ($size bytes)" test "$size" -le 32768

# The same run with room: every task has one row, in completion order.
( ulimit -f 20000; exec "$TREEFARM" run "$WORK/many.json" --out "$WORK/room" --quiet ) \
    >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "with room: exit 0 (got $rc)" test "$rc" = 0
expect "with room: every task id once" tasks_exactly_once "$WORK/room" 20000
expect "with room: per-node computed sums to 20000" computed_sums_to "$WORK/room" 20000
expect "with room: results.json counts 20000 recorded" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["recorded"] == 20000 and r["records_refused"] == 0 else 1)' "$WORK/room/results.json"

finish
