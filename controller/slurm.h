/*  slurm — the Slurm allocation a run is in (docs/deploy.md, "Slurm").
 *
 *  Inside an allocation (salloc, sbatch), Slurm describes it in the
 *  environment: SLURM_JOB_ID, SLURM_JOB_NODELIST (a compressed host list
 *  such as "cn[01-04]") and SLURM_JOB_CPUS_PER_NODE ("8(x3),4": the CPUs
 *  of each host, in the host list's order). `scontrol show hostnames`
 *  expands the host list; treefarm reads nothing of Slurm's own. The
 *  allocation then places nodes on its hosts, each node taking one CPU
 *  (or SLURM_CPUS_PER_TASK, which the step's srun inherits): round the
 *  hosts in order, skipping a host without the CPUs left, so several
 *  nodes share a host when there are fewer hosts than nodes.
 *
 *  Every size read from Slurm is checked against a limit below before it
 *  is used. The parsers are pure (tests/test_slurm.c); slurm_alloc_read
 *  runs scontrol.
 */
#ifndef TF_SLURM_H
#define TF_SLURM_H

#include <stddef.h>
#include <time.h>

/*  The most hosts an allocation may have for treefarm, the most CPUs
 *  one host may report, and the longest host name Slurm may give
 *  (overlay/host.h's). */
#define SLURM_HOSTS_MAX 4096
#define SLURM_CPUS_MAX 65536
#define SLURM_HOSTNAME_MAX 253
/*  The longest SLURM_JOB_ID and SLURM_JOB_CPUS_PER_NODE taken. */
#define SLURM_JOB_ID_MAX 64
#define SLURM_CPUS_TEXT_MAX 65536
/*  Seconds scontrol and squeue may take. */
#define SLURM_QUERY_TIMEOUT 30.0

typedef struct slurm_alloc slurm_alloc_t;

/*  The allocation this process runs in, from the environment and
 *  `scontrol show hostnames "$SLURM_JOB_NODELIST"`. NULL with a message in
 *  err when there is none (no SLURM_JOB_ID), when a variable is missing
 *  or malformed, when scontrol fails, or when a count is past its limit;
 *  the message names the variable or quotes scontrol. */
slurm_alloc_t *slurm_alloc_read (char *err, size_t errlen);

/*  An allocation of nhosts hosts with the given names and CPUs (copied),
 *  as slurm_alloc_read makes one (tests). NULL with err filled when a
 *  count is out of range. */
slurm_alloc_t *slurm_alloc_new (const char *job, char *const hosts[], const int cpus[],
                                int nhosts, char *err, size_t errlen);

/*  Destroy an allocation and null the caller's pointer. Safe on NULL. */
void slurm_alloc_destroy (slurm_alloc_t **self_p);

/*  The job's id, its number of hosts, host i's name and CPUs, and the
 *  CPUs of all its hosts. Borrowed. */
const char *slurm_alloc_job (const slurm_alloc_t *self);
int slurm_alloc_hosts (const slurm_alloc_t *self);
const char *slurm_alloc_host (const slurm_alloc_t *self, int i);
int slurm_alloc_cpus (const slurm_alloc_t *self, int i);
long slurm_alloc_total_cpus (const slurm_alloc_t *self);

/*  Place one more node: the next host round the list with the CPUs a
 *  node takes not yet taken. Returns the host's index, or -1 with err
 *  filled when none has them ("more tree nodes than the allocation
 *  holds: job J has H hosts and C CPUs, one a node, so N nodes at
 *  most"). */
int slurm_alloc_place (slurm_alloc_t *self, char *err, size_t errlen);

/*  SLURM_JOB_CPUS_PER_NODE's text ("8(x3),4") into cpus[0..nhosts): each
 *  comma-separated item is a count, optionally followed by "(xR)", R
 *  repeats; the items must cover exactly nhosts hosts, each count in
 *  1..SLURM_CPUS_MAX. Returns 0, or -1 with err saying what is wrong. */
int slurm_cpus_parse (const char *text, int *cpus, int nhosts, char *err, size_t errlen);

/*  scontrol's output, one host name a line, into at most max new strings
 *  in hosts (the caller frees each). Returns how many, or -1 with err
 *  filled on an empty list, a name that is not one (overlay/host.h's
 *  characters, at most SLURM_HOSTNAME_MAX), or more than max. */
int slurm_hosts_parse (const char *text, char **hosts, int max, char *err, size_t errlen);

/*  The job's end, as `squeue -h -j JOB -o %e` says (its time limit):
 *  *end 0 when the job has none. Returns 0, or -1 with err filled. */
int slurm_job_end (const char *job, time_t *end, char *err, size_t errlen);

/*  The most words --slurm-args may have. */
#define SLURM_SALLOC_WORDS_MAX 64

/*  Outside an allocation, ask Slurm for one and run this command in it:
 *  exec `salloc ARGS... /proc/self/exe COMMAND ARGV...`, args being
 *  salloc's options split at blanks (no quoting) and argv[1..argc) this
 *  command's own, without --slurm-args and with --slurm. salloc runs it
 *  here once the allocation is granted, and the run's srun step places
 *  the nodes there. Returns only when it cannot exec: -1 with err. */
int slurm_salloc_exec (const char *args, const char *command, int argc, char **argv,
                       char *err, size_t errlen);

#endif
