/*  fuzz_tasks — libFuzzer target for the tasks loader: any bytes must load
 *  or be refused with a message naming the file and line, never crash,
 *  leak or hang. A bag that loads is walked the way the controller will:
 *  each task found again by its id, its input bytes summed, its spec for a
 *  node built and encoded. Inputs named in the data are looked up on this
 *  machine (stat and open read-only; nothing is written). Seeds in
 *  tests/fuzz/corpus/tasks.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/tasks.h"
#include "overlay/util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char err[TF_ERRLEN];
    err[0] = '\0';
    tasks_t *tasks = tasks_load_buffer ((const char *) data, size, "fuzz.jsonl", err,
                                        sizeof err);
    if (!tasks) {
        if (strncmp (err, "fuzz.jsonl:", 11) != 0)
            abort ();   /* every refusal names the file and line */
        return 0;
    }
    for (size_t i = 0; i < tasks_count (tasks); i++) {
        const tasks_task_t *t = tasks_get (tasks, i);
        if (tasks_find (tasks, t->id) != (ssize_t) i || (!t->argv == !t->sh))
            abort ();
        (void) tasks_input_bytes (tasks, i);
        json_t *spec = tasks_spec_json (tasks, i);
        char *text = json_dumps (spec, JSON_COMPACT);
        if (!text || !json_object_get (spec, "id"))
            abort ();   /* every string of a task encodes */
        free (text);
        json_decref (spec);
    }
    tasks_destroy (&tasks);
    return 0;
}
