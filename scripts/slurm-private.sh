# A private Slurm on this machine, for tests/it_slurm.sh and
# scripts/bench-slurm-startup.sh (sourced; bash). Needs root (slurmd
# starts every user's tasks) and Debian's slurm-wlm and munge
# (scripts/install-deps.sh); no systemd.
#
#   slurm_private_start DIR   writes DIR/slurm.conf (cluster treefarm-it,
#                             one node: this machine as $(hostname -s) at
#                             127.0.0.1 with 64 CPUs declared, so that
#                             steps of up to 64 tasks fit; free loopback
#                             ports; state, spool and logs under DIR;
#                             munge through a private key and socket),
#                             starts munged, slurmctld and slurmd in the
#                             foreground as children of this shell,
#                             exports SLURM_CONF, and waits up to 30 s for
#                             the node to be idle. 0 when it is.
#   slurm_private_stop        stops what slurm_private_start started, by
#                             PID, and waits for it.
#
# Everything runs as the calling user, who is root.
SLURM_PRIVATE_PIDS=()

slurm_private_port () {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_private_conf () {
    local dir=$1
    cat >"$dir/slurm.conf" <<CONF
ClusterName=treefarm-it
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$(slurm_private_port)
SlurmdPort=$(slurm_private_port)
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmdParameters=config_overrides
NodeName=$(hostname -s) NodeAddr=127.0.0.1 CPUs=64 State=UNKNOWN
PartitionName=it Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
}

slurm_private_start () {
    local dir=$1 deadline
    mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/run"
    dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null
    chmod 600 "$dir/munge.key"
    slurm_private_conf "$dir"
    export SLURM_CONF=$dir/slurm.conf
    unset SLURM_JOB_ID SLURM_JOBID SLURM_JOB_NODELIST SLURM_JOB_CPUS_PER_NODE
    # --force: munged wants its socket's directory open to all, and a
    # mktemp directory is private (0700).
    /usr/sbin/munged -F --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" \
        --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/munge.seed" 2>"$dir/log/munged.err" &
    SLURM_PRIVATE_PIDS+=($!)
    deadline=$((SECONDS + 10))
    while [ ! -S "$dir/munge.sock" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.05; done
    /usr/sbin/slurmctld -D -f "$dir/slurm.conf" 2>"$dir/log/slurmctld.err" &
    SLURM_PRIVATE_PIDS+=($!)
    /usr/sbin/slurmd -D -f "$dir/slurm.conf" 2>"$dir/log/slurmd.err" &
    SLURM_PRIVATE_PIDS+=($!)
    deadline=$((SECONDS + 30))
    while [ "$SECONDS" -lt "$deadline" ]; do
        [ "$(timeout 5 sinfo -h -o %T 2>/dev/null)" = idle ] && return 0
        sleep 0.1
    done
    return 1
}

slurm_private_stop () {
    local p
    for p in "${SLURM_PRIVATE_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${SLURM_PRIVATE_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    SLURM_PRIVATE_PIDS=()
}
