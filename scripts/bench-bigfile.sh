#!/usr/bin/env bash
# make bench, part "big input": one command task whose input is a 2 GiB
# file (sparse, so that making it costs nothing) goes down the chain
# bench/chain3.json (src -> mid -> leaf, one slot each on src and mid, a
# buffer of 1): src and mid are kept busy by two sleeping tasks, so mid
# receives the big task and forwards it to the leaf, where `wc -c` counts
# it. Every node's peak resident memory (VmHWM, polled every 50 ms) is
# reported: the input is streamed through spools on disk in chunks, never
# held, so the peaks stay flat however large the file (issue 11: under
# 64 MiB). Writes about 6 GiB to the scratch disk; takes HOLD_S (40) s.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
SIZE_MB=${BIG_MB:-2048}
HOLD_S=${HOLD_S:-40}   # mid's sleep: longer than the big input's trip to mid
WORK=$(mktemp -d /tmp/treefarm-bench-big.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
truncate -s "${SIZE_MB}M" "$WORK/big.bin"
# src and mid (one slot each) are kept busy sleeping while the big task
# is handed out and arrives at mid, so mid forwards it to the leaf (which
# has asked for a task all along).
{ printf '{"id": "hold-src", "argv": ["sleep", "5"]}\n'
  printf '{"id": "hold-mid", "argv": ["sleep", "%s"]}\n' "$HOLD_S"
  printf '{"id": "big", "argv": ["wc", "-c", "big.bin"], "inputs": ["%s"]}\n' "$WORK/big.bin"
} >"$WORK/big.jsonl"
t0=$(date +%s.%N)
"$TF" run bench/chain3.json --tasks "$WORK/big.jsonl" --out "$WORK/out" --quiet \
    >"$WORK/o" 2>"$WORK/e" &
ctl=$!
declare -A peak=()
set +e   # processes come and go while we look
while kill -0 "$ctl" 2>/dev/null; do
    for p in $(pgrep -P "$ctl"); do
        name=$( (tr '\0' ' ' </proc/"$p"/cmdline) 2>/dev/null | sed -n 's/.*--name \([^ ]*\).*/\1/p')
        kb=$(awk '/^VmHWM/ {print $2}' /proc/"$p"/status 2>/dev/null)
        if [ -n "$name" ] && [ -n "$kb" ] && [ "$kb" -gt "${peak[$name]:-0}" ]; then
            peak[$name]=$kb
        fi
    done
    sleep 0.05
done
wait "$ctl"
rc=$?
set -e
[ "$rc" = 0 ] || { echo "big input: the run failed (exit $rc)"; tail -5 "$WORK/e"; exit 1; }
t1=$(date +%s.%N)
node=$(python3 -c 'import csv,sys; print([r for r in csv.DictReader(open(sys.argv[1])) if r["id"] == "big"][0]["node"])' "$WORK/out/tasks.csv")
echo "big input: one ${SIZE_MB} MiB input down src -> mid -> leaf, computed on $node," \
     "$(python3 -c "print('%.1f' % ($t1 - $t0))") s, wc says $(cut -d' ' -f1 "$WORK/out/tasks/big/stdout") bytes"
for n in src mid leaf; do
    printf '  %-5s peak RSS %6.1f MiB\n' "$n" "$(echo "${peak[$n]:-0} / 1024" | bc -l)"
done
