#!/usr/bin/env bash
# make bench, part "big input": one command task whose input is a 2 GiB
# file (sparse, so that making it costs nothing) goes down the chain
# bench/chain3.json (src -> mid -> leaf, one slot each on src and mid, a
# buffer of 1): src and mid are kept busy by two sleeping tasks, so mid
# receives the big task and forwards it to the leaf, where `wc -c` counts
# it (without the end-game, which would rightly keep a 512 MiB input at
# src rather than wait for it to cross two links). Every node's peak resident memory (VmHWM, polled every 50 ms) is
# reported: the input is streamed through spools on disk in chunks, never
# held, so the peaks stay flat however large the file (the target: under
# 64 MiB). RUNS runs (default 5) of a BIG_MB (default 512) MiB input,
# HOLD_S (default 4) s each; every node's peak is a figure with the
# target max-all:64 (MiB). Writes about 3 x BIG_MB per run to the scratch
# disk. (A 2 GiB input gives the same peaks as 256 MiB: docs/commands.md.)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
SIZE_MB=${BIG_MB:-512}
# mid's sleep: longer than the big input's trip to mid (under 1 s in a
# traced run), short enough to keep make bench within its 15 minutes. Too
# short, and mid computes the big task itself: the run then fails, saying so.
HOLD_S=${HOLD_S:-4}
RUNS=${RUNS:-5}
BENCH_DIR=${BENCH_DIR:-$(mktemp -d /tmp/treefarm-bench-out.XXXXXX)}
WORK=$(mktemp -d /tmp/treefarm-bench-big.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
truncate -s "${SIZE_MB}M" "$WORK/big.bin"
# src and mid (one slot each) are kept busy sleeping while the big task
# is handed out and arrives at mid, so mid forwards it to the leaf (which
# has asked for a task all along).
{ printf '{"id": "hold-src", "argv": ["sleep", "2"]}\n'
  printf '{"id": "hold-mid", "argv": ["sleep", "%s"]}\n' "$HOLD_S"
  printf '{"id": "big", "argv": ["wc", "-c", "big.bin"], "inputs": ["%s"]}\n' "$WORK/big.bin"
} >"$WORK/big.jsonl"

# one run: prints "src_kib mid_kib leaf_kib" (peak RSS), checks the result
one () {
    local out=$WORK/out
    rm -rf "$out"
    "$TF" run bench/chain3.json --tasks "$WORK/big.jsonl" --out "$out" --quiet \
        --no-endgame >"$WORK/o" 2>"$WORK/e" &
    local ctl=$! p name kb rc
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
    [ "$rc" = 0 ] || { echo "big input: the run failed (exit $rc)" >&2; tail -5 "$WORK/e" >&2; return 1; }
    local bytes node
    bytes=$(cut -d' ' -f1 "$out/tasks/big/stdout")
    node=$(python3 -c 'import csv,sys; print([r for r in csv.DictReader(open(sys.argv[1])) if r["id"] == "big"][0]["node"])' "$out/tasks.csv")
    [ "$bytes" = $((SIZE_MB << 20)) ] && [ "$node" = leaf ] || {
        echo "big input: computed on $node with $bytes bytes, expected leaf and $((SIZE_MB << 20))" >&2; return 1; }
    echo "${peak[src]:-0} ${peak[mid]:-0} ${peak[leaf]:-0}"
}

start=$(date +%s)
echo "big input: one ${SIZE_MB} MiB input down src -> mid -> leaf, $RUNS runs; peak RSS (VmHWM, polled every 50 ms)"
src=() mid=() leaf=()
for i in $(seq "$RUNS"); do
    read -r a b c < <(one)
    src+=("$(echo "$a / 1024" | bc -l)") mid+=("$(echo "$b / 1024" | bc -l)") leaf+=("$(echo "$c / 1024" | bc -l)")
done
for n in src mid leaf; do
    declare -n v=$n
    python3 scripts/benchlib.py figure --out "$BENCH_DIR/bigfile.json" --id "bigfile.peak_rss.$n" \
        --what "peak RSS of $n while a ${SIZE_MB} MiB command input streams through the chain" \
        --unit MiB --values "${v[@]}" --target max-all:64
done
echo "  bigfile: $(( $(date +%s) - start )) s"
