/*  ledger — the held queue and the root's record of the bag (ledger.h).
 *
 *  The queue is a ring that doubles when full; the record is one bit per
 *  task and one attempt counter per command; the commands out again with
 *  nodes to avoid are a small unordered set (a command is in it from its
 *  retry's hand-out to its result).
 */
#include "node/ledger.h"

#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

struct ledger {
    ledger_cfg_t cfg;
    task_t *queue;           /* held tasks, ring, oldest at q_head */
    uint32_t q_head, q_len, q_cap;
    uint64_t next_task;      /* root: next fresh id to hand out */
    uint8_t *done_bits;      /* root: 1 bit per task, set once complete */
    uint64_t completed;      /* root: bits set */
    uint8_t *attempts;       /* root: tries of each command task so far */
    task_t *retrying;        /* root: commands handed out again, with the
                                nodes they failed on, until their result */
    uint32_t nretrying, retrying_cap;
};

ledger_t *
ledger_new (const ledger_cfg_t *cfg)
{
    ledger_t *self = xcalloc (1, sizeof *self);
    self->cfg = *cfg;
    if (cfg->is_root) {
        self->done_bits = xcalloc_resident (cfg->task_count / 8 + 1, 1);
        self->attempts = xcalloc (cfg->command_tasks + 1, 1);
    }
    return self;
}

void
ledger_destroy (ledger_t **self_p)
{
    ledger_t *self = *self_p;
    if (!self)
        return;
    free (self->queue);
    free (self->done_bits);
    free (self->attempts);
    free (self->retrying);
    free (self);
    *self_p = NULL;
}

void
ledger_push_task (ledger_t *self, const task_t *task)
{
    if (self->q_len == self->q_cap) {
        uint32_t cap = self->q_cap ? 2 * self->q_cap : 8;
        task_t *q = xmalloc (cap * sizeof *q);
        for (uint32_t i = 0; i < self->q_len; i++)
            q[i] = self->queue[(self->q_head + i) % self->q_cap];
        free (self->queue);
        self->queue = q;
        self->q_cap = cap;
        self->q_head = 0;
    }
    self->queue[(self->q_head + self->q_len++) % self->q_cap] = *task;
}

uint32_t
ledger_held (const ledger_t *self)
{
    return self->q_len;
}

const task_t *
ledger_peek_task (const ledger_t *self, uint32_t pos)
{
    return &self->queue[(self->q_head + pos) % self->q_cap];
}

int
ledger_find_task (const ledger_t *self,
                  int (*eligible) (const void *arg, const task_t *task),
                  const void *arg, int fresh_synthetic)
{
    for (uint32_t i = 0; i < self->q_len; i++)
        if (eligible (arg, &self->queue[(self->q_head + i) % self->q_cap]))
            return (int) i;
    if (self->cfg.is_root && self->next_task < self->cfg.task_count
        && (fresh_synthetic || self->next_task < self->cfg.command_tasks))
        return (int) self->q_len;
    return -1;
}

static int
is_done (const ledger_t *self, uint64_t task)
{
    return (self->done_bits[task / 8] >> (task % 8)) & 1;
}

/*  Move next_task past the tasks complete already. */
static void
skip_done (ledger_t *self)
{
    while (self->next_task < self->cfg.task_count && is_done (self, self->next_task))
        self->next_task++;
}

/*  A task of the bag, to hand out the first time or to try again. A
 *  command's size and units are the bag's to say, when it is taken
 *  (look); until then it has the synthetic ones. */
static task_t
fresh_task (const ledger_t *self, uint64_t id)
{
    return (task_t){.id = id, .units = self->cfg.task_units, .bytes = self->cfg.task_bytes,
                    .kind = id < self->cfg.command_tasks ? CORE_KIND_COMMAND
                                                         : CORE_KIND_SYNTHETIC};
}

/*  Root: a command taken to go out (fresh, tried again or given back)
 *  has its input looked at now (core_task_info_t). */
static void
look (const ledger_t *self, task_t *t)
{
    core_task_info_t info = self->cfg.task_info (self->cfg.task_arg, t->id);
    t->units = info.units;
    t->bytes = info.bytes;
    t->unreadable = info.unreadable;
}

/*  Remove and return the held task at pos, or the fresh one. */
static task_t
take (ledger_t *self, uint32_t pos)
{
    task_t t;
    if (self->cfg.is_root && pos == self->q_len) {
        t = fresh_task (self, self->next_task++);
        skip_done (self);
    }
    else {
        uint32_t cap = self->q_cap, at = (self->q_head + pos) % cap;
        t = self->queue[at];
        for (uint32_t i = pos; i > 0; i--) {
            uint32_t to = (self->q_head + i) % cap, from = (self->q_head + i - 1) % cap;
            self->queue[to] = self->queue[from];
        }
        self->q_head = (self->q_head + 1) % cap;
        self->q_len--;
    }
    if (self->cfg.is_root && t.kind == CORE_KIND_COMMAND)
        look (self, &t);
    return t;
}

/*  Remember a command handed out again with nodes to avoid. */
static void
remember (ledger_t *self, const task_t *t)
{
    if (self->nretrying == self->retrying_cap) {
        self->retrying_cap = self->retrying_cap ? 2 * self->retrying_cap : 8;
        self->retrying = xrealloc (self->retrying,
                                   self->retrying_cap * sizeof *self->retrying);
    }
    self->retrying[self->nretrying++] = *t;
}

uint64_t
ledger_fresh_left (const ledger_t *self)
{
    return self->cfg.is_root ? self->cfg.task_count - self->next_task : 0;
}

task_t
ledger_take_task (ledger_t *self, uint32_t pos)
{
    task_t t = take (self, pos);
    if (self->cfg.is_root && t.kind == CORE_KIND_COMMAND) {
        if (self->attempts[t.id] < UINT8_MAX)
            self->attempts[t.id]++;
        if (t.navoid > 0)
            remember (self, &t);
    }
    return t;
}

int
ledger_recall_task (ledger_t *self, uint64_t task, task_t *out)
{
    for (uint32_t i = 0; i < self->nretrying; i++)
        if (self->retrying[i].id == task) {
            *out = self->retrying[i];
            self->retrying[i] = self->retrying[--self->nretrying];
            return 1;
        }
    return 0;
}

int
ledger_is_done (const ledger_t *self, uint64_t task)
{
    if (!self->done_bits || task >= self->cfg.task_count)
        return 0;
    return is_done (self, task);
}

int
ledger_mark_done (ledger_t *self, uint64_t task)
{
    if (!self->done_bits || task >= self->cfg.task_count)
        return -1;
    if (!is_done (self, task)) {
        self->done_bits[task / 8] |= (uint8_t) (1u << (task % 8));
        self->completed++;
    }
    skip_done (self);
    return 0;
}

uint64_t
ledger_completed (const ledger_t *self)
{
    return self->completed;
}

int
ledger_all_done (const ledger_t *self)
{
    return self->cfg.is_root && self->completed == self->cfg.task_count;
}

uint32_t
ledger_attempts (const ledger_t *self, uint64_t task)
{
    if (!self->attempts || task >= self->cfg.command_tasks)
        return 0;
    return self->attempts[task];
}

int
ledger_retry_task (ledger_t *self, uint64_t task, uint32_t node, const task_t *had)
{
    uint32_t max = self->cfg.max_attempts ? self->cfg.max_attempts : 1;
    if (!self->attempts || task >= self->cfg.command_tasks || self->attempts[task] >= max)
        return 0;
    task_t t = fresh_task (self, task);
    if (had)
        memcpy (t.avoid, had->avoid, (t.navoid = had->navoid) * sizeof *t.avoid);
    if (!task_avoids (&t, node)) {
        if (t.navoid + 1 >= self->cfg.nnodes || t.navoid == CORE_MAX_AVOID)
            t.navoid = 0;
        if (self->cfg.nnodes > 1 && !self->cfg.root_only)
            t.avoid[t.navoid++] = node;
    }
    ledger_push_task (self, &t);
    return 1;
}
