/*  taskkey — a task's number as the text key of a czmq hash table. */
#ifndef TF_TASKKEY_H
#define TF_TASKKEY_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    char text[24];
} taskkey_t;

static inline taskkey_t
taskkey (uint64_t task)
{
    taskkey_t k;
    snprintf (k.text, sizeof k.text, "%" PRIu64, task);
    return k;
}

#endif
