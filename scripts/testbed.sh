#!/usr/bin/env bash
# testbed.sh — build a treefarm config's tree as Linux network namespaces
# joined by veth pairs shaped with tc, on this one machine (docs/testbed.md).
#
#   scripts/testbed.sh up CONFIG        build it (refuses if any part exists)
#   scripts/testbed.sh down CONFIG      remove what `up` built for CONFIG
#   scripts/testbed.sh status CONFIG    list it; exit 0 when all up, 3 if not
#   scripts/testbed.sh config CONFIG    print CONFIG with every host netns:NAME
#
# Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN), iproute2 and python3;
# delay_ms needs the kernel's sch_netem.
set -euo pipefail

PROG=testbed.sh
MARK_PREFIX="treefarm-testbed:"     # lo's alias in every namespace we own

usage () {
    cat <<'EOF'
usage: scripts/testbed.sh up|down|status|config CONFIG
       scripts/testbed.sh --help

Builds the tree of a treefarm config as network namespaces on this machine:
one namespace per node, one veth pair per tree edge, each node's address on
its lo, routes to its parent and children, and both ends of every edge
shaped with tc to the child's link_mbps (MB/s, 1 MB = 2^20 bytes), plus
netem delay when the child has delay_ms.

  up      build the testbed; refuses, creating nothing, if any of its
          namespaces exists; on a failure midway removes what it created
  down    delete the veths and namespaces `up` made for CONFIG (namespaces
          whose lo is not marked as this config's are left alone); succeeds
          when there is nothing to remove
  status  list namespaces, addresses and shaped links; exit 0 when the
          whole testbed is up, 3 when any part is missing
  config  print CONFIG with each node's host set to netns:NAME, to run
          treefarm on the testbed (docs/testbed.md)

Namespace of a node: NAME when its host is "netns:NAME", else
tf-<config name>-<node name>. Node i (tree[] order, from 0) has address
198.(18 + k/256).(k%256).(i%254 + 1) with k = i/254, so node 0 is
198.18.0.1; at most 130048 nodes. Exit: 0 ok, 1 failure, 2 bad usage or
config, 3 (status) not up.
EOF
}

die ()  { echo "$PROG: $*" >&2; exit 1; }
bad ()  { echo "$PROG: $*" >&2; exit 2; }
note () { echo "$PROG: $*" >&2; }

# plan CONFIG: validate the config and print the plan, one record a line,
# fields separated by tabs:
#   cfg   NAME HASH NNODES(unused) TIME_SCALE PAYLOAD_SCALE SCALED(0/1)
#   node  I NAME NS ADDR
#   edge  CHILD PARENT PNS CNS PVETH CVETH PADDR CADDR BPS BURST LIMIT DELAY_MS NETEM_LIMIT MBPS
# With MODE=config, print the config with netns hosts instead.
plan () {
    python3 - "$1" "${2:-plan}" <<'PY'
import hashlib, json, math, os, re, sys

path, mode = sys.argv[1], sys.argv[2]
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,63}$")
MAX_NODES = 512 * 254          # the address scheme (docs/testbed.md)
MAX_DELAY_MS = 1000            # CONFIG_MAX_DELAY_MS
MB = 1 << 20
BURST_S = 0.005                # burst: 5 ms of the rate ...
BURST_MIN = 4096               # ... but at least two full frames
LIMIT_S = 0.05                 # queue beyond the burst: 50 ms of the rate ...
LIMIT_MIN = 1 << 20            # ... but at least 1 MiB (TCP small queues)
FRAME = 1514                   # MTU 1500 + Ethernet header

def fail(msg):
    sys.stderr.write("testbed.sh: %s: %s\n" % (path, msg))
    sys.exit(2)

def no_dups(pairs):
    keys = [k for k, _ in pairs]
    for k in keys:
        if keys.count(k) > 1:
            fail("duplicate key %s" % json.dumps(k))
    return dict(pairs)

def no_constant(name):
    fail("invalid JSON literal %s" % name)

try:
    with open(path) as f:
        doc = json.load(f, object_pairs_hook=no_dups, parse_constant=no_constant)
except OSError as e:
    fail("cannot read: %s" % e.strerror)
except ValueError as e:
    fail("not valid JSON: %s" % e)
if not isinstance(doc, dict):
    fail("expected an object at the top level")

base = os.path.basename(path)
cname = doc.get("name", base[:-5] if base.endswith(".json") and len(base) > 5 else base)
if not isinstance(cname, str) or not NAME.match(cname):
    fail("name: must be 1..63 characters from [A-Za-z0-9_.-], got %s" % json.dumps(cname))
plat = doc.get("platform", {})
if not isinstance(plat, dict):
    fail("platform: expected an object")
tree = doc.get("tree")
if not isinstance(tree, list) or not tree:
    fail("tree: expected a non-empty array")
if len(tree) > MAX_NODES:
    fail("tree: has %d nodes; the testbed's addresses hold at most %d" % (len(tree), MAX_NODES))

def number(node, where, key):
    v = node.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        fail("%s: %s: expected a number, got %s" % (where, key, json.dumps(v)))
    return v

index, nss = {}, {}
for i, n in enumerate(tree):
    if not isinstance(n, dict):
        fail("tree[%d]: expected an object" % i)
    name = n.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        fail("tree[%d]: name: must be 1..63 characters from [A-Za-z0-9_.-]" % i)
    if name in index:
        fail("tree[%d]: duplicate node name %s" % (i, json.dumps(name)))
    index[name] = i
roots = [i for i, n in enumerate(tree) if "parent" not in n]
if len(roots) != 1:
    fail("tree: needs exactly one root (a node without parent), has %d" % len(roots))

nodes = []
for i, n in enumerate(tree):
    where = 'tree[%d] (node "%s")' % (i, n["name"])
    host = n.get("host", "")
    if not isinstance(host, str):
        fail("%s: host: expected a string" % where)
    if host.startswith("netns:"):
        ns = host[len("netns:"):]
        if not NAME.match(ns) or ns in (".", ".."):
            fail("%s: host: netns name must be 1..63 characters from "
                 "[A-Za-z0-9_.-], got %s" % (where, json.dumps(ns)))
    else:
        ns = "tf-%s-%s" % (cname, n["name"])
    if ns in nss:
        fail("%s: namespace %s is also tree[%d]'s" % (where, ns, nss[ns]))
    nss[ns] = i
    parent = -1
    if "parent" in n:
        if n["parent"] not in index:
            fail("%s: parent %s is not a node" % (where, json.dumps(n["parent"])))
        parent = index[n["parent"]]
        mbps = number(n, where, "link_mbps")
        if not mbps * MB >= 1024:
            fail("%s: link_mbps: the testbed shapes at least 1 KiB/s "
                 "(0.0009765625 MB/s), got %r" % (where, mbps))
        delay = number(n, where, "delay_ms") if "delay_ms" in n else 0
        if not 0 <= delay <= MAX_DELAY_MS:
            fail("%s: delay_ms: must be in 0..%d, got %r" % (where, MAX_DELAY_MS, delay))
    elif "delay_ms" in n or "link_mbps" in n:
        fail("%s: the root has no parent link" % where)
    k = i // 254
    addr = "198.%d.%d.%d" % (18 + k // 256, k % 256, i % 254 + 1)
    nodes.append((i, n["name"], ns, addr, parent))

for i, _, _, _, p in nodes:          # every node must reach the root
    seen = set()
    while p >= 0:
        if p in seen or p == i:
            fail("tree: cycle through %s" % json.dumps(tree[p]["name"]))
        seen.add(p)
        p = nodes[p][4]

if mode == "config":
    out = []
    for n, (_, _, ns, _, _) in zip(tree, nodes):
        e = {}
        for key, v in n.items():
            if key != "host":
                e[key] = v
            if key == ("parent" if "parent" in n else "name"):
                e["host"] = "netns:" + ns
        out.append(e)
    items = [(k, out if k == "tree" else v) for k, v in doc.items()]
    lines = ["{"]
    for j, (k, v) in enumerate(items):
        comma = "," if j < len(items) - 1 else ""
        if k == "tree":
            lines.append('  "tree": [')
            lines += ["    " + json.dumps(e) + ("," if t < len(v) - 1 else "")
                      for t, e in enumerate(v)]
            lines.append("  ]" + comma)
        else:
            lines.append("  %s: %s%s" % (json.dumps(k), json.dumps(v), comma))
    lines.append("}")
    print("\n".join(lines))
    sys.exit(0)

h = hashlib.sha1(cname.encode()).hexdigest()[:6]
scaled = plat.get("time_scale", 1) != 1 or plat.get("payload_scale", 1) != 1
print("cfg\t%s\t%s\t%d\t%r\t%r\t%d" % (cname, h, len(tree), plat.get("time_scale", 1),
                                      plat.get("payload_scale", 1), scaled))
for i, name, ns, addr, _ in nodes:
    print("node\t%d\t%s\t%s\t%s" % (i, name, ns, addr))
for i, name, ns, addr, p in nodes:
    if p < 0:
        continue
    n = tree[i]
    bps = round(n["link_mbps"] * MB)                 # bytes/s, exact to 1 B/s
    burst = max(BURST_MIN, math.ceil(bps * BURST_S))
    limit = burst + max(LIMIT_MIN, math.ceil(bps * LIMIT_S))
    delay = n.get("delay_ms", 0) or 0              # "0" when there is none
    netem_limit = max(1000, 2 * math.ceil(bps * delay / 1000 / FRAME))
    print("edge\t%d\t%d\t%s\t%s\ttf%sp%d\ttf%sc%d\t%s\t%s\t%d\t%d\t%d\t%r\t%d\t%r"
          % (i, p, nodes[p][2], ns, h, i, h, i, nodes[p][3], addr, bps, burst, limit,
             delay, netem_limit, n["link_mbps"]))
PY
}

# load_plan CONFIG: fill the arrays below from plan().
load_plan () {
    local text rec a b c d e f g h i j k l m n
    text=$(plan "$1") || exit 2
    N_I=() N_NAME=() N_NS=() N_ADDR=()
    E_CHILD=() E_PARENT=() E_PNS=() E_CNS=() E_PV=() E_CV=() E_PADDR=() E_CADDR=()
    E_BPS=() E_BURST=() E_LIMIT=() E_DELAY=() E_NLIMIT=() E_MBPS=()
    while IFS=$'\t' read -r rec a b c d e f g h i j k l m n; do
        case $rec in
        cfg)  CNAME=$a HASH=$b TIME_SCALE=$d PAYLOAD_SCALE=$e SCALED=$f ;;
        node) N_I+=("$a") N_NAME+=("$b") N_NS+=("$c") N_ADDR+=("$d") ;;
        edge) E_CHILD+=("$a") E_PARENT+=("$b") E_PNS+=("$c") E_CNS+=("$d")
              E_PV+=("$e") E_CV+=("$f") E_PADDR+=("$g") E_CADDR+=("$h")
              E_BPS+=("$i") E_BURST+=("$j") E_LIMIT+=("$k") E_DELAY+=("$l")
              E_NLIMIT+=("$m") E_MBPS+=("$n") ;;
        esac
    done <<<"$text"
    MARK="$MARK_PREFIX$CNAME"
}

ns_exists () { [ -e "/run/netns/$1" ] || ip netns list | awk '{print $1}' | grep -qxF "$1"; }
ns_mark ()   { ip -n "$1" -o link show dev lo 2>/dev/null | sed -n 's/.* alias \(.*\)$/\1/p'; }
ns_ours ()   { ns_exists "$1" && [ "$(ns_mark "$1")" = "$MARK" ]; }

# run CMD...: one step of `up`. Counts the step (TF_TESTBED_FAIL_AFTER=N
# fails the step after N, for tests of the rollback) and reports a failing
# command with its error.
STEPS=0
run () {
    local out
    STEPS=$((STEPS + 1))
    if [ -n "${TF_TESTBED_FAIL_AFTER:-}" ] && [ "$STEPS" -gt "$TF_TESTBED_FAIL_AFTER" ]; then
        note "injected failure before step $STEPS (TF_TESTBED_FAIL_AFTER=$TF_TESTBED_FAIL_AFTER): $*"
        return 1
    fi
    if ! out=$("$@" 2>&1); then
        note "failed: $*: $out"
        return 1
    fi
}

# What `up` made so far, undone by rollback in reverse order.
MADE_NS=() MADE_VETH=()
rollback () {
    local k
    trap - EXIT INT TERM
    note "removing what this run created (${#MADE_VETH[@]} veth pairs, ${#MADE_NS[@]} namespaces)"
    for ((k = ${#MADE_VETH[@]} - 1; k >= 0; k--)); do
        ip -n "${MADE_VETH[k]%% *}" link del "${MADE_VETH[k]#* }" 2>/dev/null || true
    done
    for ((k = ${#MADE_NS[@]} - 1; k >= 0; k--)); do
        ip netns del "${MADE_NS[k]}" 2>/dev/null \
            || note "could not delete namespace ${MADE_NS[k]}"
    done
}

# tc_shape NS DEV BPS BURST LIMIT DELAY_MS NETEM_LIMIT: egress of DEV.
tc_shape () {
    local ns=$1 dev=$2 bits=$(($3 * 8)) burst=$4 limit=$5 delay=$6 nlimit=$7
    if [ "$delay" = 0 ]; then
        run tc -n "$ns" qdisc add dev "$dev" root handle 1: tbf \
            rate "${bits}bit" burst "$burst" limit "$limit"
    else
        run tc -n "$ns" qdisc add dev "$dev" root handle 1: netem \
            delay "${delay}ms" limit "$nlimit" || return 1
        run tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: tbf \
            rate "${bits}bit" burst "$burst" limit "$limit"
    fi
}

# netem_missing: 0 when the kernel has no netem qdisc (probed in a
# throw-away namespace, deleted before returning).
netem_missing () {
    local probe="tf-probe-$$" rc=1
    ip netns add "$probe" >/dev/null 2>&1 || return 1
    ip -n "$probe" link set lo up
    tc -n "$probe" qdisc add dev lo root netem delay 1ms >/dev/null 2>&1 || rc=0
    ip netns del "$probe"
    return $rc
}

scale_warning () {
    if [ "$SCALED" = 1 ]; then
        note "note: $CONFIG has time_scale $TIME_SCALE and payload_scale $PAYLOAD_SCALE;" \
             "the kernel shapes physical bytes at platform rates (link_mbps), so a run" \
             "on the testbed is faithful only with both 1 (docs/testbed.md)"
    fi
}

cmd_up () {
    local i k exist=() delays=0
    for ns in "${N_NS[@]}"; do
        if ns_exists "$ns"; then
            if ns_ours "$ns"; then exist+=("$ns (this testbed's)"); else exist+=("$ns (not this testbed's)"); fi
        fi
    done
    if [ ${#exist[@]} -gt 0 ]; then
        die "refusing: ${#exist[@]} namespace(s) already exist: ${exist[*]};" \
            "run 'scripts/testbed.sh down $CONFIG' first, or remove them"
    fi
    for d in "${E_DELAY[@]}"; do [ "$d" = 0 ] || delays=$((delays + 1)); done
    if [ "$delays" -gt 0 ] && netem_missing; then
        die "refusing: $delays link(s) have delay_ms but this kernel has no netem" \
            "qdisc (sch_netem, CONFIG_NET_SCH_NETEM); nothing was created"
    fi
    scale_warning

    trap 'rollback' EXIT
    trap 'exit 130' INT TERM
    for ((k = 0; k < ${#N_NS[@]}; k++)); do
        ns=${N_NS[k]}
        run ip netns add "$ns"
        MADE_NS+=("$ns")
        run ip -n "$ns" link set dev lo alias "$MARK"
        run ip -n "$ns" link set dev lo up
        run ip -n "$ns" addr add "${N_ADDR[k]}/32" dev lo
    done
    for ((k = 0; k < ${#E_CHILD[@]}; k++)); do
        local pns=${E_PNS[k]} cns=${E_CNS[k]} pv=${E_PV[k]} cv=${E_CV[k]}
        run ip link add "$pv" netns "$pns" type veth peer name "$cv" netns "$cns"
        MADE_VETH+=("$pns $pv")
        run ip -n "$pns" link set dev "$pv" up
        run ip -n "$cns" link set dev "$cv" up
        run ip -n "$pns" route add "${E_CADDR[k]}/32" dev "$pv" src "${E_PADDR[k]}"
        run ip -n "$cns" route add "${E_PADDR[k]}/32" dev "$cv" src "${E_CADDR[k]}"
        for side in "$pns $pv" "$cns $cv"; do
            # shellcheck disable=SC2086  # side is "NS DEV"
            tc_shape $side "${E_BPS[k]}" "${E_BURST[k]}" "${E_LIMIT[k]}" \
                "${E_DELAY[k]}" "${E_NLIMIT[k]}"
        done
    done
    trap - EXIT INT TERM
    echo "testbed $CNAME up: ${#N_NS[@]} namespaces, ${#E_CHILD[@]} shaped links"
    echo "  (run 'scripts/testbed.sh status $CONFIG' to list them)"
}

cmd_down () {
    local ns dev pids removed=0 left=0 failed=0
    # Veths first (deleting one end deletes its peer at once, even if a
    # process keeps a namespace alive), then the namespaces.
    for ns in "${N_NS[@]}"; do
        ns_exists "$ns" || continue
        if ! ns_ours "$ns"; then
            note "leaving namespace $ns alone: its lo is not marked '$MARK'"
            left=$((left + 1))
            continue
        fi
        for dev in $(ip -n "$ns" -o link show 2>/dev/null \
                     | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^tf${HASH}[pc][0-9]*$" || true); do
            ip -n "$ns" link del "$dev" 2>/dev/null || true   # the peer may be gone already
        done
    done
    for ns in "${N_NS[@]}"; do
        ns_ours "$ns" || continue
        pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
        [ -z "$pids" ] || note "warning: processes still in $ns: $pids(its links are gone;" \
                               "the namespace lives on unnamed until they exit)"
        if ip netns del "$ns"; then removed=$((removed + 1)); else failed=$((failed + 1)); fi
    done
    echo "testbed $CNAME down: removed $removed namespace(s), left $left not made for it"
    [ "$failed" = 0 ] || die "could not delete $failed namespace(s)"
}

cmd_status () {
    local k ns state up=0 missing=0 q
    echo "testbed $CNAME: ${#N_NS[@]} nodes, ${#E_CHILD[@]} links"
    printf '  %-20s %-32s %-16s %s\n' node namespace address state
    for ((k = 0; k < ${#N_NS[@]}; k++)); do
        ns=${N_NS[k]}
        if ! ns_exists "$ns"; then state=absent missing=$((missing + 1))
        elif ns_ours "$ns"; then state=up up=$((up + 1))
        else state="foreign (not made by testbed.sh for $CNAME)" missing=$((missing + 1))
        fi
        printf '  %-20s %-32s %-16s %s\n' "${N_NAME[k]}" "$ns" "${N_ADDR[k]}" "$state"
    done
    printf '  %-20s %-22s %-10s %-24s %s\n' link "MB/s (bit/s)" delay_ms veths state
    for ((k = 0; k < ${#E_CHILD[@]}; k++)); do
        state=up
        for side in "${E_PNS[k]} ${E_PV[k]}" "${E_CNS[k]} ${E_CV[k]}"; do
            ns_ours "${side%% *}" || { state=absent; continue; }
            q=$(tc -n "${side%% *}" qdisc show dev "${side#* }" 2>/dev/null | grep -o 'tbf.*rate [^ ]*' || true)
            [ -n "$q" ] || state="absent"
        done
        [ "$state" = up ] || missing=$((missing + 1))
        printf '  %-20s %-22s %-10s %-24s %s\n' \
            "${N_NAME[${E_PARENT[k]}]}->${N_NAME[${E_CHILD[k]}]}" \
            "${E_MBPS[k]} ($((E_BPS[k] * 8)))" "${E_DELAY[k]}" "${E_PV[k]}/${E_CV[k]}" "$state"
    done
    return $(( missing == 0 ? 0 : 3 ))
}

case "${1:-}" in
-h|--help|help) usage; exit 0 ;;
up|down|status|config) ;;
"") usage >&2; exit 2 ;;
*) bad "unknown command '$1' (expected up, down, status or config; see --help)" ;;
esac
[ $# -eq 2 ] || bad "usage: scripts/testbed.sh $1 CONFIG (see --help)"
CMD=$1 CONFIG=$2
command -v python3 >/dev/null || die "python3 is needed to read the config"

if [ "$CMD" = config ]; then
    plan "$CONFIG" config || exit 2
    load_plan "$CONFIG"
    scale_warning
    exit 0
fi
command -v ip >/dev/null || die "iproute2 (ip, tc) is needed"
command -v tc >/dev/null || die "iproute2 (ip, tc) is needed"
load_plan "$CONFIG"
case $CMD in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status || exit 3 ;;
esac
