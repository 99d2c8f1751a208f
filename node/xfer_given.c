/*  xfer_given — the tasks a parent gave each child's subtree, until their
 *  completion (or the task itself) comes back. See node/xfer_int.h.
 */
#include <stdlib.h>

#include "node/xfer_int.h"
#include "overlay/util.h"

/*  Task is out in ch's subtree until its completion comes back. */
void
xfer_given_add (child_t *ch, const task_t *task)
{
    if (ch->given.n == ch->given.cap) {
        ch->given.cap = ch->given.cap ? 2 * ch->given.cap : 8;
        ch->given.items = xrealloc (ch->given.items,
                                    ch->given.cap * sizeof *ch->given.items);
    }
    ch->given.items[ch->given.n++] = *task;
}

/*  Where task is among ch's outstanding ones, or -1. The set is as large
 *  as the subtree's tasks in flight. */
int64_t
xfer_given_find (const child_t *ch, uint64_t task)
{
    for (uint32_t i = 0; i < ch->given.n; i++)
        if (ch->given.items[i].id == task)
            return i;
    return -1;
}

/*  Take task off ch's outstanding ones (into *out when not NULL).
 *  Returns 0, or -1 if it was not there. */
int
xfer_given_remove (child_t *ch, uint64_t task, task_t *out)
{
    int64_t i = xfer_given_find (ch, task);
    if (i < 0)
        return -1;
    if (out)
        *out = ch->given.items[i];
    ch->given.items[i] = ch->given.items[--ch->given.n];
    return 0;
}

/*  --- the subtree's tasks ----------------------------------------------------- */

int
xfer_take_given (xfer_t *self, int c, const core_done_t *done, uint32_t ndone,
                 char *err, size_t errlen)
{
    child_t *ch = &self->children[c];
    if (self->taken_cap < ndone) {
        self->taken_cap = ndone;
        self->taken = xrealloc (self->taken, self->taken_cap * sizeof *self->taken);
    }
    for (uint32_t i = 0; i < ndone; i++)
        if (xfer_given_remove (ch, done[i].task, &self->taken[i]) != 0) {
            uint64_t bad = done[i].task;
            while (i-- > 0)
                xfer_given_add (ch, &self->taken[i]);
            return tf_error (err, errlen, "task %llu was never given to that child "
                             "(or came back already)", (unsigned long long) bad);
        }
    return 0;
}

const task_t *
xfer_taken (const xfer_t *self)
{
    return self->taken;
}

uint32_t
xfer_drop_asks (xfer_t *self, int c)
{
    asks_t *a = &self->children[c].asks;
    uint32_t dropped = a->wanted;
    a->n = a->head = a->wanted = 0;
    return dropped;
}

int
xfer_was_given (const xfer_t *self, int c, uint64_t task)
{
    return xfer_given_find (&self->children[c], task) >= 0;
}

const task_t *
xfer_given_list (const xfer_t *self, int c, uint32_t *n)
{
    *n = 0;
    if (c < 0 || c >= self->cfg.nchildren)
        return NULL;
    *n = self->children[c].given.n;
    return self->children[c].given.items;
}

void
xfer_drop_given (xfer_t *self, int c, uint64_t task)
{
    xfer_given_remove (&self->children[c], task, NULL);
}

const task_t *
xfer_lose_child (xfer_t *self, int c, uint32_t *n)
{
    child_t *ch = &self->children[c];
    ch->lost = 1;
    self->nstreaming -= ch->streaming;
    ch->sending = ch->streaming = ch->cur.probe = 0;
    ch->drains.n = ch->drains.unacked = 0;
    ch->asks.n = ch->asks.wanted = 0;
    xfer_replan (self);   /* a kept child lost: the next counts; its share
                             goes to the others */
    *n = ch->given.n;
    ch->given.n = 0;
    return ch->given.items;
}

