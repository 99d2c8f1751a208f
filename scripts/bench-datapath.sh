#!/usr/bin/env bash
# make bench, part "datapath": MiB/s of task payload through treefarm's data
# path against iperf3 on the same path, timed in the same invocation and
# interleaved run by run, so that the machine's drift hits both sides
# (docs/performance.md, "Data path"). RUNS runs (default 5) of:
#
#   edge    one parent-to-child edge on loopback: 16 tasks of 64 MiB to the
#           child (payload_scale 1, the default chunks of 512 KiB and
#           window of 4, or WINDOW), against iperf3 moving 1 GiB over
#           127.0.0.1; also, for the record and without a target, the same
#           edge with a window of 16;
#   chain4  src -> a -> b -> leaf on loopback, 16 tasks delivered to the
#           leaf, the relays forwarding each chunk as it arrives, against
#           the edge of the same run;
#   netns   the edge between two network namespaces joined by a veth pair
#           shaped to 1 Gbit/s on both ends (scripts/testbed.sh: tbf,
#           docs/testbed.md), 4 tasks, against iperf3 between the same
#           namespaces (256 MiB); and the chain of four over such links
#           (4 tasks to the leaf) against that edge. Needs root and
#           `ip netns`; without them it says so and records nothing.
#
# A treefarm figure is the payload the receiving node took in while it was
# receiving: (its bytes_in - one chunk) / (its last chunk accepted - its
# first chunk accepted), the times from its --trace receive spans (the
# first chunk arrived before the clock starts, so it is not counted). The
# nodes above it compute one task each, one that lasts longer than the run's
# transfers (an idle engine takes the first task it holds: local compute
# first), and relay every other; the receiving node computes instantly.
# Links are emulated at 10^6 MB/s, so treefarm's pacing never holds a chunk
# back; on the testbed the kernel shapes the link and treefarm does not pace.
# An iperf3 figure is its receiver's: bytes received / its seconds.
#
# Figures go to $BENCH_DIR/datapath.json (scripts/benchlib.py); BENCH_DIR
# defaults to a fresh temporary directory. Takes about 2 minutes (HOLD_*
# below are most of it: the nodes above the receiver compute for that long).
# KEEP=1 keeps the scratch directory (configs, results, traces, logs).
set -euo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s.%N)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
TF=$BUILD/bin/treefarm
RUNS=${RUNS:-5}
WINDOW=${WINDOW:-4}
BENCH_DIR=${BENCH_DIR:-$(mktemp -d /tmp/treefarm-bench.XXXXXX)}
OUT=$BENCH_DIR/datapath.json
CHUNK=$((512 * 1024))
[ -x "$TF" ] || { echo "datapath: $TF is missing (make first)" >&2; exit 1; }
for tool in iperf3 python3; do
    command -v "$tool" >/dev/null || { echo "datapath: $tool is missing (scripts/install-deps.sh)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/treefarm-dp.XXXXXX)
NAME=dp$$                 # the testbeds' config names: namespaces tf-$NAME-*,
                          # tf-${NAME}c-*
TESTBEDS=()               # the testbed configs that are up
SERVER=""                 # the iperf3 server running now
cleanup () {
    if [ -n "$SERVER" ] && kill -0 "$SERVER" 2>/dev/null; then
        kill "$SERVER" 2>/dev/null || true
        wait "$SERVER" 2>/dev/null || true
    fi
    for tb in "${TESTBEDS[@]}"; do
        bash scripts/testbed.sh down "$tb" >/dev/null 2>&1 \
            || echo "datapath: could not remove the testbed of $tb" >&2
    done
    [ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# config FILE NAME COUNT "NODE ..." [WINDOW]: a chain of nodes, each the
# child of the one before, 64 MiB tasks of 1 unit; every node but the last
# computes a task in $HOLD seconds, the last instantly.
config () {
    python3 - "$@" <<'PY'
import json, sys
path, name, count, nodes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
window = int(sys.argv[5]) if len(sys.argv) > 5 else 4
hold = float(sys.argv[6]) if len(sys.argv) > 6 else 3
link = float(sys.argv[7]) if len(sys.argv) > 7 else 1e6
tree = []
for i, n in enumerate(nodes):
    node = {"name": n, "compute": 1e6 if i == len(nodes) - 1 else 1 / hold}
    if i > 0:
        node.update(parent=nodes[i - 1], link_mbps=link)
    tree.append(node)
json.dump({"name": name, "tasks": {"count": count, "input_mb": 64, "units": 1},
           "policy": "fcfs",
           "platform": {"time_scale": 1, "payload_scale": 1, "chunk_kib": 512,
                        "window": window},
           "tree": tree}, open(path, "w"), indent=1)
PY
}

# tf_run CONFIG OUT NODE: run it; NODE's payload MiB/s (see above) in RATE.
tf_run () {
    "$TF" run "$1" --out "$2" --trace "$2.trace.json" --quiet >"$2.log" 2>&1 || {
        echo "datapath: treefarm run $1 failed:" >&2; tail -5 "$2.log" >&2; return 1; }
    RATE=$(python3 - "$2" "$3" "$CHUNK" <<'PY'
import json, sys
out, node, chunk = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(out + "/results.json"))
if r["status"] != "complete":
    sys.exit("datapath: %s: status %s" % (out, r["status"]))
events = json.load(open(out + ".trace.json"))["traceEvents"]
pid = [e["pid"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"
       and e["args"]["name"] == node][0]
spans = [e for e in events if e.get("cat") == "receive" and e["pid"] == pid]
if len(spans) < 2:
    sys.exit("datapath: %s: %s received %d tasks; the nodes above it computed the rest "
             "(the machine is too slow for the HOLD_* times)" % (out, node, len(spans)))
first = min(e["ts"] for e in spans)
last = max(e["ts"] + e["dur"] for e in spans)
got = [n for n in r["nodes"] if n["name"] == node][0]["bytes_in"]
print("%.1f" % ((got - chunk) / 2**20 / ((last - first) / 1e6)))
PY
)
}

# iperf_run BYTES SERVER_NS CLIENT_NS ADDRESS: iperf3 sends BYTES from the
# client to the server (namespaces: "" for this one); the receiver's MiB/s
# in RATE.
iperf_run () {
    local bytes=$1 sns=$2 cns=$3 addr=$4 port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    local sx=() cx=()
    [ -z "$sns" ] || sx=(ip netns exec "$sns")
    [ -z "$cns" ] || cx=(ip netns exec "$cns")
    "${sx[@]}" iperf3 -s -1 -B "$addr" -p "$port" >"$WORK/iperf-server.log" 2>&1 &
    SERVER=$!
    local ok=""
    for _ in $(seq 50); do
        if "${sx[@]}" ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then ok=1; break; fi
        sleep 0.05
    done
    [ -n "$ok" ] || { echo "datapath: iperf3 server did not listen" >&2; return 1; }
    "${cx[@]}" iperf3 -c "$addr" -p "$port" -n "$bytes" -J >"$WORK/iperf.json" \
        || { echo "datapath: iperf3 failed" >&2; return 1; }
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
    RATE=$(python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["end"]["sum_received"]; print("%.1f" % (e["bits_per_second"] / 8 / 2**20))' "$WORK/iperf.json")
}

# netns_ok: can this run make network namespaces? Says why not.
netns_ok () {
    if [ "$(id -u)" -ne 0 ]; then
        echo "netns: skipped: not root (network namespaces need CAP_SYS_ADMIN); nothing recorded"
        return 1
    fi
    if ! ip netns add "$NAME-probe" 2>/dev/null; then
        echo "netns: skipped: \`ip netns add\` is refused here; nothing recorded"
        return 1
    fi
    ip netns del "$NAME-probe"
}

# Seconds a task lasts on the nodes above the receiver: longer than the
# transfers of a run (1 GiB at 600 MiB/s, through the chain at 300 MiB/s;
# 256 MiB at 1 Gbit/s, after the two tasks the relays keep), so that each
# computes one and relays the rest.
HOLD_EDGE=2 HOLD_CHAIN=4 HOLD_NETNS=4
config "$WORK/edge.json" edge 17 "src sink" "$WINDOW" "$HOLD_EDGE"
config "$WORK/edge16.json" edge16 17 "src sink" 16 "$HOLD_EDGE"
config "$WORK/chain.json" chain4 19 "src a b leaf" "$WINDOW" "$HOLD_CHAIN"

# testbed CONFIG: bring its namespaces up; the netns config in TB.
testbed () {
    TB=${1%.json}-netns.json
    bash scripts/testbed.sh config "$1" >"$TB" 2>/dev/null
    bash scripts/testbed.sh up "$TB" >"$WORK/testbed.log" 2>&1 \
        || { echo "datapath: testbed up failed:" >&2; tail -5 "$WORK/testbed.log" >&2; exit 1; }
    TESTBEDS+=("$TB")
}
NETNS=""
if netns_ok; then
    # 1 Gbit/s: 125,000,000 bytes/s, in MB of 2^20 (the testbed's unit).
    config "$WORK/tb.json" "$NAME" 5 "src sink" "$WINDOW" "$HOLD_NETNS" 119.2092896
    testbed "$WORK/tb.json"
    NS_EDGE=$TB
    config "$WORK/tbc.json" "${NAME}c" 7 "src a b leaf" "$WINDOW" "$HOLD_NETNS" 119.2092896
    testbed "$WORK/tbc.json"
    NS_CHAIN=$TB
    NETNS=1
fi

edge=() edge16=() iperf=() chain=() ns=() nsiperf=() nschain=()
echo "datapath: $RUNS runs, interleaved (load: $(cut -d' ' -f1-3 /proc/loadavg))"
for i in $(seq "$RUNS"); do
    tf_run "$WORK/edge.json" "$WORK/edge-$i" sink; edge+=("$RATE")
    iperf_run 1024M "" "" 127.0.0.1; iperf+=("$RATE")
    tf_run "$WORK/chain.json" "$WORK/chain-$i" leaf; chain+=("$RATE")
    tf_run "$WORK/edge16.json" "$WORK/edge16-$i" sink; edge16+=("$RATE")
    line="  run $i: edge ${edge[-1]}, iperf3 ${iperf[-1]}, chain4 ${chain[-1]}, edge window 16 ${edge16[-1]}"
    if [ -n "$NETNS" ]; then
        tf_run "$NS_EDGE" "$WORK/ns-$i" sink; ns+=("$RATE")
        iperf_run 256M "tf-$NAME-sink" "tf-$NAME-src" 198.18.0.2; nsiperf+=("$RATE")
        tf_run "$NS_CHAIN" "$WORK/nsc-$i" leaf; nschain+=("$RATE")
        line="$line, netns ${ns[-1]}, iperf3 netns ${nsiperf[-1]}, netns chain4 ${nschain[-1]}"
    fi
    echo "$line MiB/s"
done

fig () { python3 scripts/benchlib.py figure --out "$OUT" --unit MiB/s "$@"; }
fig --id datapath-edge-loopback \
    --what "payload over one parent-to-child edge on loopback, 64 MiB tasks, window $WINDOW" \
    --values "${edge[@]}" --ref-what "iperf3 on 127.0.0.1" --ref-values "${iperf[@]}" \
    --target ratio-min:0.60
fig --id datapath-edge-loopback-window16 \
    --what "the same edge with a window of 16 chunks (8 MiB in flight)" \
    --values "${edge16[@]}" --ref-what "iperf3 on 127.0.0.1" --ref-values "${iperf[@]}" \
    --note "for the record: a wider window than the default, no target"
fig --id datapath-chain4 \
    --what "payload delivered to the leaf of src -> a -> b -> leaf on loopback, cut-through relays" \
    --values "${chain[@]}" --ref-what "the single edge, same run" --ref-values "${edge[@]}" \
    --target ratio-min:0.80
if [ -n "$NETNS" ]; then
    fig --id datapath-edge-netns-1gbit \
        --what "payload over one edge between two namespaces, veth shaped to 1 Gbit/s (tbf)" \
        --values "${ns[@]}" --ref-what "iperf3 between the same namespaces" \
        --ref-values "${nsiperf[@]}" --target ratio-min:0.95
    fig --id datapath-chain4-netns-1gbit \
        --what "payload delivered to the leaf of src -> a -> b -> leaf, each link a veth shaped to 1 Gbit/s" \
        --values "${nschain[@]}" --ref-what "the single shaped edge, same run" \
        --ref-values "${ns[@]}" --target ratio-min:0.80
fi
echo "datapath: figures in $OUT; $(python3 -c "import sys; print('%.0f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$START" "$(date +%s.%N)") s"
