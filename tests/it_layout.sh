#!/usr/bin/env bash
# The tree's size, layering and docs limits (scripts/check-layout.py): the
# tree meets them, and every rule can fail. On copies of a clean minimal
# tree broken one way each, check-layout.py must exit 1 and name the
# problem: a file over 900 lines, node/node.c over 400, a function of 51
# lines (one of exactly 50 passes), controller/ including node/, and a doc
# line with a date, a clock time, a commit hash, an issue number or "this
# morning". The clean copy exits 0, docs with numbers that only look like
# those included (large decimals, a ratio like 10:30:100, an HTML entity,
# a hex file name, a hex word without digits).
source "$(dirname "$0")/lib.sh"

CHECK=${TF_SRCDIR:-$PWD}/scripts/check-layout.py

python3 "$CHECK" >"$WORK/tree.out" 2>&1
rc=$?
expect "the tree meets the layout limits (exit $rc)" test "$rc" = 0
[ "$rc" = 0 ] || head -20 "$WORK/tree.out"

# func NAME LINES: a C function NAME whose body, '{' to '}' in column 0,
# spans LINES lines.
func () {
    printf 'static int\n%s (int x)\n{\n' "$1"
    for _ in $(seq $(($2 - 3))); do echo "    x += 1;"; done
    printf '    return x;\n}\n\n'
}

# The clean tree: one file per layer, includes pointing down, a node.c of
# 400 lines, a file of 900, a function of 50, docs with innocent numbers.
CLEAN=$WORK/clean
mkdir -p "$CLEAN"/{overlay,policies,node,controller,docs}
printf '#include "overlay/util.h"\n' >"$CLEAN/overlay/util.c"
printf '#include "overlay/util.h"\n' >"$CLEAN/policies/fcfs.c"
printf '#include "overlay/util.h"\n#include "policies/fcfs.h"\n' >"$CLEAN/node/core.c"
printf '#include "overlay/util.h"\n#include "policies/fcfs.h"\n' >"$CLEAN/controller/run.c"
func fifty 50 >>"$CLEAN/overlay/util.c"
{ func main 10; seq 390 | sed 's|^|// |'; } | head -400 >"$CLEAN/node/node.c"
seq 900 | sed 's|^|// |' >"$CLEAN/controller/big.h"
cat >"$CLEAN/README.md" <<'EOF'
# treefarm

A bag of 1048576 tasks, 2147483648 bytes; sshd's MaxStartups 10:30:100.
EOF
cat >"$CLEAN/docs/notes.md" <<'EOF'
The 2.0 format; &#123; is an entity; a ratio of 3:2; `#include "x.h"`;
the file 5be0876a.json, the word deadbeef, the size 0x7fffffff.
EOF

# layout CASE: run check-layout.py on the copy $WORK/CASE into
# $WORK/CASE.out; its exit status.
layout () { python3 "$CHECK" --root "$WORK/$1" >"$WORK/$1.out" 2>&1; }

layout clean
rc=$?
expect "a clean tree: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || cat "$WORK/clean.out"
python3 "$CHECK" --root "$CLEAN" --list >"$WORK/list.out" 2>&1
expect "a clean tree: the function of exactly 50 lines is listed at 50" \
    grep -q '^func *50 overlay/util.c:4 fifty$' "$WORK/list.out"

# broken CASE MESSAGE SHELL: copy the clean tree to $WORK/CASE, run SHELL
# in it, and check that check-layout.py exits 1 with a line matching
# MESSAGE (a grep pattern), counting that one problem only.
broken () {
    cp -r "$CLEAN" "$WORK/$1"
    (cd "$WORK/$1" && eval "$3")
    layout "$1"
    local rc=$?
    expect "$1: exit 1 (got $rc)" test "$rc" = 1
    expect "$1: says '$2'" grep -q -- "$2" "$WORK/$1.out"
    expect "$1: and nothing else" grep -q "^check-layout: 1 problem(s)$" "$WORK/$1.out"
}

broken file901 "^controller/big.h:901: file of 901 lines, over 900" 'echo "// one more" >>controller/big.h'
broken node401 "^node/node.c:401: file of 401 lines, over 400" 'echo "// one more" >>node/node.c'
broken func51 "^overlay/util.c:[0-9]*: function sixty of 51 lines, over 50" \
    'func sixty 51 >>overlay/util.c'
broken func51wrapped "^overlay/util.c:[0-9]*: function wrapped of 51 lines, over 50" \
    'func wrapped 51 | sed "s/^wrapped (int x)/wrapped (int x,\n         int y)/" >>overlay/util.c'
broken includes "^controller/run.c:3: controller/ includes node/" \
    'echo "#include \"node/core.h\"" >>controller/run.c'
broken includes-up "^controller/run.c:3: controller/ includes node/" \
    'echo "#include \"../node/core.h\"" >>controller/run.c'
broken overlay-up "^overlay/util.c:2: overlay/ includes policies/" \
    'sed -i "1a #include \"policies/fcfs.h\"" overlay/util.c'
broken date "^docs/notes.md:3: a date: '2026-11-25'" 'echo "Measured on 2026-11-25." >>docs/notes.md'
broken clock "^README.md:4: a clock time: '18:59 UTC'" 'echo "Run at 18:59 UTC." >>README.md'
broken hash "^docs/notes.md:3: a commit hash: 'e5b8cdc'" 'echo "Since e5b8cdc the loop waits." >>docs/notes.md'
broken hash-after-number "^docs/notes.md:3: a commit hash: 'e5b8cdc'" \
    'echo "1048576 bytes since e5b8cdc." >>docs/notes.md'
broken hash-in-parens "^docs/notes.md:3: a commit hash: 'commit a5e00d0'" \
    'echo "Changed (commit a5e00d0): the loop." >>docs/notes.md'
broken issue "^docs/notes.md:3: an issue number: 'issue 14'" 'echo "Fixed in issue 14." >>docs/notes.md'
broken issue-hash "^docs/notes.md:3: an issue number: '#14'" 'echo "Fixed in #14." >>docs/notes.md'
broken morning "^docs/notes.md:3: a time of day: 'this morning'" 'echo "Measured this morning." >>docs/notes.md'
broken night "^docs/notes.md:3: a word that dates the text: 'the night before'" \
    'echo "Faster than the night before." >>docs/notes.md'

finish
