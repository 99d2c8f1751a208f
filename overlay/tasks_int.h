/*  tasks_int — what overlay/tasks.c shares with overlay/tasks_command.c
 *  (the `--command` shorthand): the bag's struct and how a task joins it.
 *  Not for other files: they use overlay/tasks.h.
 */
#ifndef TF_TASKS_INT_H
#define TF_TASKS_INT_H

#include <czmq.h>

#include "overlay/jsonw.h"
#include "overlay/tasks.h"

struct tasks_t {
    tasks_task_t *tasks;     /* owns every string and array they point to */
    size_t count;
    size_t alloc;
    zhashx_t *index;         /* id -> index + 1; keys borrowed from tasks */
};

/*  An empty bag. */
tasks_t *tasks_new (void);

/*  Free what a task owns (also a task left half-built by an error). */
void task_free (tasks_task_t *t);

/*  Append a complete task (taking what it owns) and index its id, which
 *  the caller has checked is new. */
void add_task (tasks_t *self, tasks_task_t *t);

/*  Check the file at path is a readable regular file whose base name is
 *  not reserved, and fill in with its absolute path, name and size.
 *  Messages go to field (NULL: none, they name the path). Returns 0 or
 *  -1 (said through ld). */
int stage_input (jsonw_doc_t *ld, const char *field, const char *path, tasks_input_t *in);

#endif
