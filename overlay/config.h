/*  config — the experiment: tasks, policy, platform mode and the tree.
 *
 *  One JSON document describes a whole experiment (docs/config.md has an
 *  annotated example). It is loaded strictly: duplicate keys, unknown keys,
 *  wrong types, non-positive rates and sizes, duplicate node names, a
 *  missing parent, a cycle, no root or two roots are all errors whose
 *  message names the place — "path:line:col: ..." for syntax, and
 *  "path: tree[3] (node "Lab3"): ..." or "path: platform.time_scale: ..."
 *  for content. The controller ships the same document to every node, so
 *  both sides parse with this one loader.
 *
 *  Units: sizes in MB, rates in MB/s, where 1 MB = 2^20 bytes throughout;
 *  compute rates in compute units per second (a unit is one diagonal of the
 *  synthetic kernel, docs/model.md, "The synthetic kernel"); interference rates in fraction of
 *  compute lost per MB/s.
 */
#ifndef TF_CONFIG_H
#define TF_CONFIG_H

#include <stddef.h>
#include <jansson.h>
#include <stdint.h>

#define CONFIG_MAX_NODES 65536
#define CONFIG_MB 1048576.0
/*  The largest physical task payload (input_mb * 2^20 * payload_scale) an
 *  experiment may declare; the wire protocol refuses larger ones
 *  (PROTO_MAX_TASK_BYTES). A choice: a node holds up to its buffer plus
 *  one payloads, so this keeps its payload memory to a few GiB at worst;
 *  real tasks are hundreds of KiB to a few MiB. */
#define CONFIG_MAX_TASK_BYTES ((uint64_t) 1 << 30)
/*  The largest stream of a command task, bytes: its input bundle (files
 *  and a header, node/bundle.h) or its result stream (outputs, stdout and
 *  stderr). A choice: such streams are spooled to and served from disk,
 *  never held in memory, so disk bounds them, not memory. 16 GiB is 8
 *  times the 2 GiB inputs users asked for, at least CONFIG_MAX_TASK_BYTES
 *  (every in-memory payload size is a valid stream size), and a chunk
 *  count fits 32 bits even at the smallest chunk (1 KiB). The wire
 *  (overlay/proto.h), the core and the bundle format all use this one
 *  limit. */
#define CONFIG_MAX_STREAM_BYTES ((uint64_t) 16 << 30)

/*  The largest bag. A run writes one tasks.csv row per task (about 20
 *  bytes: 2 GB at this count) and the root and the controller each keep
 *  one bit per task (12.5 MB), so 1e8 tasks is a long experiment that
 *  still fits a laptop; a count like 1e13 is a typo that would fill the
 *  disk, not an experiment. */
#define CONFIG_MAX_TASKS 100000000LL

/*  The most times a run may try one failing command (commands.attempts,
 *  --retries plus one): the controller refuses more, the wire and the
 *  node's core too. */
#define CONFIG_MAX_ATTEMPTS 100
/*  The most nodes a retried command carries as ones to avoid (the nodes
 *  it failed on); after that it goes anywhere. The wire (CHUNK "avoid")
 *  and the node's core use this one limit. */
#define CONFIG_MAX_AVOID 8

/*  The largest platform input of one task, MB. A node holds up to
 *  `buffer` payloads (input_mb x payload_scale each) in memory, and a
 *  CHUNK's size must fit the wire's integers many times over; 4 GiB per
 *  task is already more than a node can hold several of. */
#define CONFIG_MAX_INPUT_MB 4096.0

/*  The most compute units in one task. A node's engine takes w units per
 *  task and refuses more than 1e15 as a programming error; 1e9 diagonals
 *  is already years of compute at the published rates, so a larger w is
 *  a typo, refused here rather than by an assertion in a node. */
#define CONFIG_MAX_UNITS 1e9

/*  The largest time scale. At 1e6 a 10 MB/s link runs at 10 TB/s and a
 *  one-second task lasts a microsecond: far past what loopback pacing and
 *  the clock can emulate, so anything larger measures nothing. */
#define CONFIG_MAX_TIME_SCALE 1e6

/*  The most command tasks one node runs at once (slots): a big machine's
 *  cores, not more. */
#define CONFIG_MAX_SLOTS 256

/*  The longest one-way delay of a link, ms (delay_ms). Only the kernel
 *  testbed (scripts/testbed.sh, docs/testbed.md) applies it, with netem,
 *  which holds rate x delay bytes per direction in kernel memory; a
 *  geostationary satellite hop is about 280 ms one way, so more than a
 *  second is a typo (a value in microseconds), not a link. */
#define CONFIG_MAX_DELAY_MS 1000.0

/*  Bounds of the integer platform keys (docs/config.md says why each). */
#define CONFIG_MAX_CHUNK_KIB 65536   /* 64 MiB: one chunk is one message */
#define CONFIG_MAX_WINDOW 1024       /* chunks in flight per child */
#define CONFIG_MAX_BUFFER 1000       /* tasks held per node */
#define CONFIG_MIN_MATRIX_N 2
#define CONFIG_MAX_MATRIX_N 16384    /* the kernel's N x N int32: 1 GiB */
#define CONFIG_MAX_SAMPLE_MS 60000   /* one sample a minute */
#define CONFIG_MIN_HEARTBEAT_MS 10   /* below, beats are load, not signal */
#define CONFIG_MAX_HEARTBEAT_MS 60000
#define CONFIG_MIN_MISSES 2          /* one late beat is not a loss */
#define CONFIG_MAX_MISSES 1000
/*  The most nodes a run may take in while it runs (docs/adapt.md, "Grow"):
 *  nodes offered by the config (joins_at_s) and join_slots together.
 *  Every node keeps that many vacant child slots, each with its own
 *  windows, meters and sampler columns, so the count stays small. */
#define CONFIG_MAX_JOINS 16
/*  The latest platform second a config may offer a node at. */
#define CONFIG_MAX_JOINS_AT_S 1e7
/*  Liveness defaults (docs/reliability.md): a beat every second of
 *  platform time, 1000 / time_scale wall ms, kept within [200, 1000] ms;
 *  a peer silent for 10 beats is lost: 2 to 10 wall seconds, long enough
 *  that a node starved by a busy machine is not taken for dead. */
#define CONFIG_HEARTBEAT_MS_MAX_DEFAULT 1000.0
#define CONFIG_HEARTBEAT_MS_MIN_DEFAULT 200.0
#define CONFIG_DEFAULT_MISSES 10

/*  A node's host when the config gives none: this machine. */
#define CONFIG_DEFAULT_HOST "local"

typedef enum {
    PLATFORM_EMULATED = 0,   /* compute sleeps w/C; rates as configured */
    PLATFORM_REAL,           /* compute runs the diagonal kernel */
} platform_mode_t;

const char *platform_mode_str (platform_mode_t mode);

/*  When an adapting parent takes back the tasks a slowed child holds
 *  (docs/adapt.md, "Reclaim"). */
typedef enum {
    RECLAIM_GATED = 0,       /* when the gate says it pays (node/gate.h) */
    RECLAIM_ALWAYS,          /* on every slowdown declared */
    RECLAIM_NEVER,
    RECLAIM_MODE_COUNT
} reclaim_mode_t;

/*  "gated", "always", "never"; "?" for a bad value. */
const char *reclaim_mode_str (reclaim_mode_t mode);

/*  The mode of that name, or -1. */
int reclaim_mode_parse (const char *name);

/*  platform.ia_order (and --ia-order): 0 for "alone", 1 for "both",
 *  -1 for anything else. */
int config_ia_order_parse (const char *word);

typedef struct {
    char *name;              /* unique, [A-Za-z0-9_.-]+, at most 63 chars */
    char *parent_name;       /* NULL for the root */
    char *host;              /* where and how the node runs (overlay/host.h):
                                local, an address of this machine,
                                ssh://[user@]host[:port], netns:NAME or
                                slurm; default CONFIG_DEFAULT_HOST */
    int index;               /* position in config_t.nodes (= tree[] order);
                                an offered node: -1 while offered, else
                                where it joined, or -2 when it was not
                                admitted */
    int parent;              /* index of the parent, -1 for the root */
    int depth;               /* 0 for the root */
    int *children;           /* indices of the children, in tree[] order */
    int nchildren;
    double compute_rate;     /* units/s with no communication, > 0; 0 on
                                a relay (config_node_is_relay) */
    double link_mbps;        /* MB/s from the parent while both compute
                                (MR); > 0, absent on the root */
    double link_idle_mbps;   /* MB/s from the parent when idle; defaults to
                                link_mbps */
    double send_limit_mbps;  /* total outgoing MB/s (B_s * Z); 0 = none */
    double ir_send;          /* IR_s at the parent of sending to this node;
                                >= 0, default 0 */
    double ir_send_alone;    /* the same while only the parent computes
                                (docs/model.md, Table 4 line 7), what the
                                IA order ranks by under "ia_order":
                                "alone"; >= 0, NAN when not given */
    double ir_recv;          /* IR_r at this node of receiving from its
                                parent; >= 0, default 0 */
    double delay_ms;         /* one-way delay of the link from the parent,
                                ms, 0..CONFIG_MAX_DELAY_MS, default 0; only
                                the kernel testbed applies it */
    uint32_t slots;          /* command tasks it runs at once, 1 ..
                                CONFIG_MAX_SLOTS; 0: absent, as many as its
                                machine has CPUs, or on a relay ("slots": 0
                                in the file), none. Synthetic tasks run one
                                at a time whatever it says */
    struct load *load;       /* background load (overlay/load.h), or NULL:
                                a dedicated machine */
    double joins_at_s;       /* an offered node (config_t.offered): the
                                platform second it is offered at; -1 for
                                a node of the tree from the start and for
                                one `treefarm join` offers */
    int vacant;              /* a node's own copy only: a child slot kept
                                for a node that may join (config_add_vacant) */
} config_node_t;

typedef struct {
    char *path;              /* where it was loaded from, for messages */
    char *name;              /* experiment name; default: file's basename */
    struct {
        uint64_t count;      /* synthetic tasks in the bag, > 0; 0 (and
                                the two below 0) when the config has no
                                "tasks" block, for runs of command tasks */
        double input_mb;     /* Z: input size of one task, MB, >= 0 */
        double units;        /* w: compute units per task, > 0 */
    } tasks;
    /*  Command tasks of this run (docs/commands.md). Not read from the file:
     *  the controller sets them from --tasks or --command, and ships them
     *  with the config (overlay/proto.h, CONFIG). Ids 0 .. count-1 of the
     *  bag are the commands, the synthetic tasks follow. */
    struct {
        uint64_t count;      /* command tasks */
        double input_mb;     /* their mean input bundle, MB (for policies) */
        uint32_t attempts;   /* tries of a failing command, 1 ..
                                CONFIG_MAX_ATTEMPTS */
    } commands;
    char *policy;            /* policy name, checked by the caller against
                                the policy table; default "fcfs" */
    struct {
        platform_mode_t mode;     /* default emulated */
        double time_scale;        /* s > 0: all rates x s; default 1 */
        double payload_scale;     /* physical bytes moved per platform byte,
                                     in (0, 1]; default 1 */
        uint32_t chunk_kib;       /* transfer chunk size; default 512 */
        uint32_t window;          /* chunks in flight per child; default 4 */
        uint32_t buffer;          /* tasks a node keeps; default 3 */
        uint32_t matrix_n;        /* kernel size N (real mode); default 1024 */
        uint32_t sample_ms;       /* sampler interval, wall ms; default 100 */
        int ir_measured;          /* "ir": "measured": IA policies order
                                     children by the online estimates of
                                     IR_s; default "configured" */
        int ia_order_both;        /* "ia_order": "both": the IA order ranks
                                     by ir_send (the rates with both
                                     computing); default "alone": by
                                     ir_send_alone where a child has it
                                     (docs/policies.md, "The IA order") */
        int adapt;                /* "adapt": true: rates estimated live,
                                     changes declared, re-planned
                                     (docs/adapt.md); default false */
        int endgame;              /* "endgame": the end of the bag's rules
                                     (docs/policies.md, "The end-game");
                                     default true */
        reclaim_mode_t reclaim;   /* "reclaim": when an adapting parent
                                     takes tasks back from a child that
                                     slowed; default "gated" */
        reclaim_mode_t admit;     /* "admit": which nodes offered to the
                                     running run join it: "gated" (when
                                     the gain pays the start-up), "always",
                                     "never"; default "gated" */
        uint32_t heartbeat_ms;    /* wall ms between heartbeats; 0: the
                                     default (config_heartbeat_s) */
        uint32_t misses;          /* "heartbeat_misses": silent beats
                                     before a peer is lost; default 10 */
    } platform;
    config_node_t *nodes;    /* nnodes entries, tree[] order; room for
                                capacity (nodes that join are appended,
                                and a node's address never changes) */
    int nnodes;
    int capacity;
    int root;                /* index of the root */
    config_node_t *offered;  /* tree[] entries with joins_at_s: offered
                                to the run while it runs, in tree[] order;
                                parent -1 unless the entry names one */
    int noffered;
    uint32_t join_slots;     /* platform.join_slots: nodes `treefarm join`
                                may offer beyond those; default 0 */
} config_t;

/*  Load and validate an experiment from a file. Returns a new config the
 *  caller destroys, or NULL with a message naming the place in err. */
config_t *config_load_file (const char *path, char *err, size_t errlen);

/*  The same from text; origin names the text in messages (a path, or
 *  "<controller>" when a node parses what the controller shipped). */
config_t *config_load_string (const char *text, const char *origin,
                              char *err, size_t errlen);

/*  The same from a parsed document (not taken: the caller keeps its
 *  reference), such as CONFIG's body once the wire has parsed it. */
config_t *config_load_json (json_t *json, const char *origin, char *err, size_t errlen);

/*  Put background load on nodes from the file at path (`--load FILE`): a
 *  JSON object, node name -> load description (overlay/load.h), each
 *  replacing that node's load; a trace's relative path starts at the
 *  file's directory. Returns 0, or -1 with a message naming the file and
 *  the node (an unknown name, or the key of a bad description) in err;
 *  then no node's load has changed. */
int config_apply_load_file (config_t *self, const char *path, char *err, size_t errlen);

/*  Check that the emulator can run the experiment: in emulated mode, no
 *  node's modelled compute rate C (1 - IR_r TR - sum IR_s TR) may reach 0
 *  while it receives at its link_mbps and sends to any one child at that
 *  child's link_mbps (capped by its send_limit_mbps); docs/config.md gives
 *  the rule. Real mode always passes. Returns 0, or -1 with a message in
 *  the loader's style naming the node and the key ("PATH: tree[3] (node
 *  "Lab3"): ir_recv 50 x link_mbps 10 leaves no compute (must be < 1)"). */
int config_check_emulation (const config_t *self, char *err, size_t errlen);

/*  The vacant child slots every node of a run keeps for nodes that join
 *  it: the offered nodes and join_slots, at most CONFIG_MAX_JOINS. */
int config_joins (const config_t *self);

/*  Read one node description as a tree[] entry is read (the same keys,
 *  with "parent" optional and "joins_at_s" allowed; its link keys are
 *  required as for any non-root node), from json, naming it origin in
 *  messages (`treefarm join`'s NODE.json, an ATTACH). Returns 0 and
 *  fills *out (config_node_clear frees it), or -1 with a message in err
 *  naming the place. */
int config_node_parse (json_t *json, const char *origin, config_node_t *out, char *err,
                       size_t errlen);

/*  Free what a node owns and zero it. */
void config_node_clear (config_node_t *node);

/*  A node as a tree[] entry of the canonical config (an offered node
 *  with its joins_at_s). A new reference. */
json_t *config_node_to_json (const config_node_t *node);

/*  Append a deep copy of node to the tree under parent (an index), as
 *  node nnodes: its parent, depth and index set, the parent's children
 *  grown, joins_at_s kept. Returns its index, or -1 with a message in
 *  err when the config is full (capacity), the parent is not a node, or
 *  the name is taken. */
int config_attach (config_t *self, const config_node_t *node, int parent, char *err,
                   size_t errlen);

/*  Undo the last config_attach (a leaf, its parent's last child): for
 *  trying a place and taking it back. Returns 0, or -1 (nothing done)
 *  when the last node is not such a leaf. */
int config_detach_last (config_t *self);

/*  Move node (not the root) and its subtree under parent (not in that
 *  subtree): off its parent's children, onto parent's, depths set anew
 *  (docs/adapt.md, "Re-parent"). Returns 0, or -1 with a message in err. */
int config_move (config_t *self, int node, int parent, char *err, size_t errlen);

/*  The vacant child slots node keeps in an adapting run to take in the
 *  children of one of its own children that is lost: the most children
 *  any of its children has (vacant slots not counted). Added to
 *  config_joins' on every node. */
int config_reparent_slots (const config_t *self, int node);

/*  A node's own copy of the config: give node n vacant child slots,
 *  named "+vacant1", ... (not valid config names, so never confused with
 *  one), with no rates. Grows the nodes array: call before taking
 *  pointers into it. */
void config_add_vacant (config_t *self, int node, int n);

/*  Fill the vacant slot at index with desc's name and rates (its parent
 *  stays). Returns 0, or -1 with a message in err when index is not
 *  vacant. */
int config_fill_vacant (config_t *self, int index, const config_node_t *desc, char *err,
                        size_t errlen);

/*  Destroy a config and null the caller's pointer. Safe on NULL. */
void config_destroy (config_t **self_p);

/*  Return the index of the node with this name, or -1. */
int config_find_node (const config_t *self, const char *name);

/*  Is node a relay: written with "slots": 0, it forwards tasks and never
 *  computes one (docs/config.md, "Relays")? A relay is the one node whose
 *  compute_rate is 0 (the loader wants > 0 of every other), so C = 0 is
 *  what the bounds, the policies and the results see of it; a vacant
 *  child slot (config_add_vacant) is none. Only the root may be one. */
int config_node_is_relay (const config_node_t *node);

/*  Replace the policy name (e.g. from --policy). The caller checks the
 *  name against the policy table. */
void config_set_policy (config_t *self, const char *policy);

/*  Return the experiment as canonical JSON text with every default made
 *  explicit; loading it gives an equal config. The caller frees. */
char *config_to_json (const config_t *self);

/*  1 if every node's host is `netns:`: the kernel testbed
 *  (scripts/testbed.sh) shapes every link with tc at its platform rate,
 *  so treefarm paces nothing, and time and payload scale must be 1. */
int config_kernel_shaped (const config_t *self);

/*  Tasks in the bag: commands and synthetic tasks. */
uint64_t config_bag_size (const config_t *self);

/*  Physical bytes one task's payload occupies on the wire:
 *  input_mb * 2^20 * payload_scale, rounded to the nearest byte. The
 *  loader refuses an experiment where this exceeds CONFIG_MAX_TASK_BYTES. */
uint64_t config_task_bytes (const config_t *self);

/*  Wall seconds between heartbeats (platform.heartbeat_ms, or the
 *  default above), and the silence after which a peer is lost: that
 *  times platform.heartbeat_misses. */
double config_heartbeat_s (const config_t *self);
double config_lost_after_s (const config_t *self);

/*  Physical bytes of one transfer chunk: chunk_kib * 1024 * payload_scale,
 *  rounded to the nearest byte, at least 1. */
uint32_t config_chunk_bytes (const config_t *self);

#endif
