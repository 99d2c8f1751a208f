#!/usr/bin/env bash
# Install the Debian packages treefarm builds and runs with, if any is
# missing. Idempotent; prints nothing when everything is already there.
set -euo pipefail

# openssh-client and openssh-server: ssh hosts (docs/deploy.md) and
# tests/it_ssh.sh, which starts its own sshd; iproute2: netns hosts;
# strace: tests/it_curve.sh reads a node's traffic off its system calls;
# libsimgrid-dev: `treefarm simulate` (docs/simulate.md); slurm-wlm and
# munge: slurm hosts (docs/deploy.md, "Slurm") and tests/it_slurm.sh,
# which starts its own munged, slurmctld and slurmd.
PACKAGES=(build-essential pkg-config libzmq3-dev libczmq-dev libjansson-dev
          libcmocka-dev libglpk-dev gnuplot-nox iproute2 procps valgrind python3
          iperf3 iputils-ping parallel
          clang libclang-rt-14-dev openssh-client openssh-server strace
          libsimgrid-dev slurm-wlm munge)

missing=()
for p in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing Debian packages: ${missing[*]}" >&2
    echo "install-deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Installing a package must not start a service: openssh-server would
# otherwise leave a system sshd listening on port 22 (the tests start
# their own on loopback). policy-rc.d says no to every start while apt
# runs, unless the machine has a policy of its own.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy"
    trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
