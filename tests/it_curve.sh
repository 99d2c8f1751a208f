#!/usr/bin/env bash
# Integration: CURVE on every socket (docs/security.md).
# 1. A run with --curve: OUT/.curve is 0700 and each node's certificate
#    0600 while it runs, a node is given a path and never a key on its
#    command line, and the files are gone after. During the run, peers
#    without a key of the run knock on the root's and an interior node's
#    children ROUTERs and on the controller's ROUTER (tests/hostile.c,
#    mode curve): without CURVE, with CURVE and a key of their own, and
#    under a real node's name with a key of their own; each sends HELLO,
#    REQUEST, DONE, STATS, FAIL and garbage. Nothing of theirs is
#    delivered: no refusal is logged, every malformed counter stays 0, the
#    FAIL never arrives, the run completes every task exactly once.
#    One node's system calls are traced (strace): no
#    message body crosses the wire in clear.
# 2. The same run with --no-curve, the control: the same knocks are
#    delivered (refused, counted) and the trace shows bodies in clear, so
#    part 1's silence means something.
# 3. Defaults and usage: a local run is not CURVE; --curve with
#    --no-curve is a usage error; a node refuses a bad certificate file
#    with a message naming the node and the file, exit 1.
source "$(dirname "$0")/lib.sh"

HOSTILE=$BUILD/tests/hostile
NODE=$(dirname "$TREEFARM")/treefarm-node
need_hostile || { finish; exit; }
STRACE=$(command -v strace || true)

# Every node's command line goes to $WRAP_ARGS; nodes log verbosely (their
# endpoint); kiosk's writes and sends are traced into $WRAP_TRACE.
cat >"$WORK/wrap.sh" <<'EOF'
#!/bin/sh
printf '%s\n' "$*" >>"$WRAP_ARGS"
case " $* " in
*" --name kiosk "*)
    if [ -n "$WRAP_STRACE" ]; then
        # LeakSanitizer cannot run under ptrace (sanitizer builds).
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
        export ASAN_OPTIONS
        exec "$WRAP_STRACE" -f -qq -e trace=write,sendto,sendmsg -s 65536 \
            -o "$WRAP_TRACE" "$@" --verbose
    fi ;;
esac
exec "$@" --verbose
EOF
chmod +x "$WORK/wrap.sh"
export WRAP_STRACE=$STRACE

N=1200   # about 8 s of wall time at time scale 20
sed -e "s/\"count\": *[0-9]*/\"count\": $N/" configs/chain4.json >"$WORK/chain4.json"

# The children endpoint node $2 of the run named $1 logged (up to 10 s).
endpoint () {
    local ep i
    for i in $(seq 100); do
        ep=$(sed -n \
             "s/^treefarm-node $2: experiment .* endpoint \"\(tcp:[^\"]*\)\"/\1/p" \
             "$WORK/$1.err")
        [ -n "$ep" ] && { echo "$ep"; return; }
        sleep 0.1
    done
}
controller_endpoint () {   # from the nodes' command lines
    sed -n 's/.*--controller \([^ ]*\).*/\1/p' "$WORK/$1.args" | head -1
}
# A value of the certificate file $1: public-key, or controller.
cert_value () { sed -n "s/^ *$2 = \"\(.*\)\"$/\1/p" "$1"; }

# Start run $1 of chain4 with options $2...; knock on campus's and
# metro's children ROUTERs and on the controller's while it runs.
attacked_run () {
    local name=$1; shift
    export WRAP_ARGS=$WORK/$name.args WRAP_TRACE=$WORK/$name.trace
    TREEFARM_NODE_WRAPPER="$WORK/wrap.sh" "$TREEFARM" run "$WORK/chain4.json" \
        --out "$WORK/$name" --quiet "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" & ctl=$!
    local campus metro control certs=$WORK/$name/.curve any
    campus=$(endpoint "$name" campus)
    metro=$(endpoint "$name" metro)
    control=$(controller_endpoint "$name")
    expect "$name: campus, metro and the controller have endpoints" \
        test -n "$campus" -a -n "$metro" -a -n "$control"
    any=0123456789012345678901234567890123456789   # a key (CURVE off)
    local kc=$any km=$any kx=$any
    if [ -f "$certs/campus.cert" ]; then
        kc=$(cert_value "$certs/campus.cert" public-key)
        km=$(cert_value "$certs/metro.cert" public-key)
        kx=$(cert_value "$certs/campus.cert" controller)
        cp "$certs/kiosk.cert" "$WORK/kiosk.cert"
        check_files "$name" "$certs"
    fi
    local knocks=()
    "$HOSTILE" curve "$campus" "$kc" metro >>"$WORK/$name.h" 2>&1 & knocks+=($!)
    "$HOSTILE" curve "$metro" "$km" branch >>"$WORK/$name.h" 2>&1 & knocks+=($!)
    "$HOSTILE" curve "$control" "$kx" kiosk >>"$WORK/$name.h" 2>&1 & knocks+=($!)
    wait "${knocks[@]}"
    expect "$name: the knocks ended while the run was still under way" kill -0 $ctl
    expect "$name: three knocks of three ways each" \
        test "$(grep -c 'three ways' "$WORK/$name.h")" = 3
    wait $ctl; rc=$?
    run_survived "$name" "$WORK/$name" "$N" "$rc" "$WORK/$name.err"
}

# The certificates of a running run: modes, one per node, paths only on
# the command lines.
check_files () {
    local name=$1 certs=$2 f bad=0
    expect "$name: OUT/.curve is mode 700" test "$(stat -c %a "$certs")" = 700
    expect "$name: one certificate per node" test "$(ls "$certs" | wc -l)" = 4
    for f in "$certs"/*.cert; do
        [ "$(stat -c %a "$f")" = 600 ] || { echo "  $f: mode $(stat -c %a "$f")"; bad=1; }
        grep -q -- "--cert $f\$" "$WORK/$name.args" || { echo "  no --cert $f"; bad=1; }
        grep -qF "$(cert_value "$f" secret-key)" "$WORK/$name.args" && bad=1
    done
    expect "$name: every certificate 0600, passed by path, no key on a command line" \
        test "$bad" = 0
}

malformed_total () {   # the controller's and every node's malformed, summed
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["malformed"] + sum(x["malformed"] for x in r["nodes"]))' "$WORK/$1/results.json"
}
curve_of () { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["curve"])' \
                  "$WORK/$1/results.json"; }
# Message bodies in clear in a trace: DONE's and STATS's JSON keys.
clear_bodies () { grep -c '\\"done\\":\|\\"stats\\":' "$WORK/$1.trace" || true; }

# --- 1. CURVE on, under attack ------------------------------------------
attacked_run curve --curve
expect "curve: results.json says curve true" test "$(curve_of curve)" = True
m=$(malformed_total curve)
expect "curve: no knock delivered: every malformed counter 0 (sum $m)" test "$m" = 0
n=$(grep -c 'refused\|unknown peer\|not authenticated' "$WORK/curve.err")
expect "curve: no refusal logged (got $n)" test "$n" = 0
expect "curve: the stranger's FAIL never arrived" \
    test "$(grep -c 'must never arrive' "$WORK/curve.err")" = 0
expect "curve: OUT/.curve is removed at the end" test ! -e "$WORK/curve/.curve"
if [ -n "$STRACE" ]; then
    n=$(clear_bodies curve)
    expect "curve: kiosk sent no message body in clear (strace: $n)" test "$n" = 0
    expect "curve: the trace saw kiosk's traffic" \
        test "$(grep -c '^[0-9]* *\(sendto\|write\)' "$WORK/curve.trace")" -gt 10
else
    nok "strace is missing (scripts/install-deps.sh installs it): the wire is not inspected"
fi

# --- 2. the control: CURVE off, the same knocks --------------------------
attacked_run plain --no-curve
expect "plain: results.json says curve false" test "$(curve_of plain)" = False
m=$(malformed_total plain)
expect "plain: the knocks without CURVE were delivered and counted (malformed $m)" \
    test "$m" -ge 22
expect "plain: and refused in the log" grep -q 'refused a message from hostile-plain' \
    "$WORK/plain.err"
if [ -n "$STRACE" ]; then
    n=$(clear_bodies plain)
    expect "plain: the trace shows bodies in clear ($n)" test "$n" -gt 0
fi

# --- 3. defaults, usage, bad certificates -------------------------------
sed -e "s/\"count\": *[0-9]*/\"count\": 30/" configs/chain4.json >"$WORK/small.json"
"$TREEFARM" run "$WORK/small.json" --out "$WORK/default" --quiet >/dev/null 2>&1
expect "a local run is not CURVE by default" test "$(curve_of default)" = False
"$TREEFARM" run "$WORK/small.json" --curve --no-curve >/dev/null 2>"$WORK/usage.err"
rc=$?
expect "--curve --no-curve: exit 2 (got $rc)" test "$rc" = 2
expect "--curve --no-curve: says why" grep -q "contradict" "$WORK/usage.err"

bad_cert () {   # what, node name, certificate, expected message
    "$NODE" --name "$2" --controller tcp://127.0.0.1:9 --cert "$3" >/dev/null \
        2>"$WORK/node.err"
    local rc=$?
    expect "$1: the node exits 1 (got $rc)" test "$rc" = 1
    expect "$1: names the node and the file: $4" \
        grep -qF "treefarm-node $2: $3$4" "$WORK/node.err"
    [ "$rc" = 1 ] || cat "$WORK/node.err"
}
if [ -f "$WORK/kiosk.cert" ]; then
    bad_cert "another node's certificate" metro "$WORK/kiosk.cert" \
        ': the certificate of node "kiosk", not of "metro"'
    # The key's first character lowered to Z85's smallest, "0" (or "1" if
    # it was "0"): still a valid Z85 group (a larger one may overflow and
    # be refused as not a key), no longer the public key's secret.
    sed -e 's/\(secret-key = "\)0/\11/; t; s/\(secret-key = "\)./\10/' \
        "$WORK/kiosk.cert" >"$WORK/bad.cert"
    bad_cert "a corrupted secret key" kiosk "$WORK/bad.cert" \
        ": the public key is not the secret key's"
    head -n 4 "$WORK/kiosk.cert" >"$WORK/short.cert"
    bad_cert "a truncated certificate" kiosk "$WORK/short.cert" ": no metadata/controller"
else
    nok "no certificate copied during the CURVE run"
fi
bad_cert "a missing certificate" kiosk "$WORK/none.cert" ": No such file or directory"

finish
