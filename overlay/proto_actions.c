/*  proto_actions — the costly actions a node weighed, in STATS and
 *  REPORT (overlay/proto_stats.h; docs/adapt.md, "Costly actions"):
 *  "actions": [{node, what, child, hold, tasks, saved_s, cost_s, taken,
 *  at_s}] and "actions_dropped".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "overlay/proto_stats.h"
#include "overlay/util.h"

void
proto_action_text (const proto_action_t *a, char *buf, size_t len)
{
    if (strcmp (a->what, "restore") == 0)
        snprintf (buf, len, "restore %s: it holds %u again", a->child, a->hold);
    else if (strcmp (a->what, "shrink") == 0)
        snprintf (buf, len, "%sshrink %s: sending to it costs more than it returns; %u "
                  "task%s %s (saves %.1f s, costs %.1f s)", a->taken ? "" : "no ", a->child,
                  a->tasks, a->tasks == 1 ? "" : "s", a->taken ? "back, then it leaves"
                  : "would come back", a->saved_s, a->cost_s);
    else if (a->taken)
        snprintf (buf, len, "reclaim from %s: %u task%s back, it holds %u (saves %.1f s, "
                  "costs %.1f s)", a->child, a->tasks, a->tasks == 1 ? "" : "s", a->hold,
                  a->saved_s, a->cost_s);
    else
        snprintf (buf, len, "no reclaim from %s: %u task%s would save %.1f s and cost "
                  "%.1f s", a->child, a->tasks, a->tasks == 1 ? "" : "s", a->saved_s,
                  a->cost_s);
}

void
proto_actions_to_json (json_t *o, const proto_actions_t *a)
{
    if (a->n > 0) {
        json_t *arr = json_array ();
        for (int i = 0; i < a->n; i++) {
            const proto_action_t *x = &a->items[i];
            json_array_append_new (
                arr, json_pack ("{s:s, s:s, s:s, s:I, s:I, s:f, s:f, s:b, s:f}", "node",
                                x->node, "what", x->what, "child", x->child, "hold",
                                (json_int_t) x->hold, "tasks", (json_int_t) x->tasks,
                                "saved_s", x->saved_s, "cost_s", x->cost_s, "taken",
                                x->taken, "at_s", x->at_s));
        }
        json_object_set_new (o, "actions", arr);
    }
    if (a->dropped)
        json_object_set_new (o, "actions_dropped", json_integer ((json_int_t) a->dropped));
}

/*  A name of 1 .. PROTO_CHANGE_NODE_MAX - 1 characters into out. */
static int
get_name (const char *name, char *out, size_t i, const char *key, char *err,
          size_t errlen)
{
    size_t n = strlen (name);
    if (n == 0 || n >= PROTO_CHANGE_NODE_MAX)
        return tf_error (err, errlen, "stats: actions[%zu]: \"%s\" must be 1 to %d "
                         "characters", i, key, PROTO_CHANGE_NODE_MAX - 1);
    memcpy (out, name, n + 1);
    return 0;
}

/*  One entry, exactly its nine keys: what "reclaim" or "restore", the
 *  counts within the config's limits, the figures finite (a declined
 *  action's saving may be negative), at_s >= 0. */
static int
get_action (const json_t *entry, size_t i, void *item, char *err, size_t errlen)
{
    proto_action_t *a = item;
    const char *node, *what, *child;
    json_int_t hold, tasks;
    json_error_t jerr;
    if (json_unpack_ex ((json_t *) entry, &jerr, JSON_STRICT,
                        "{s:s, s:s, s:s, s:I, s:I, s:F, s:F, s:b, s:F}", "node", &node,
                        "what", &what, "child", &child, "hold", &hold, "tasks", &tasks,
                        "saved_s", &a->saved_s, "cost_s", &a->cost_s, "taken", &a->taken,
                        "at_s", &a->at_s) != 0)
        return tf_error (err, errlen, "stats: actions[%zu]: %s", i, jerr.text);
    if (get_name (node, a->node, i, "node", err, errlen)
        || get_name (child, a->child, i, "child", err, errlen))
        return -1;
    if (strcmp (what, "reclaim") != 0 && strcmp (what, "restore") != 0
        && strcmp (what, "shrink") != 0)
        return tf_error (err, errlen, "stats: actions[%zu]: \"what\" must be reclaim, "
                         "restore or shrink", i);
    if (hold < 0 || hold > CONFIG_MAX_BUFFER || tasks < 0 || tasks > CONFIG_MAX_BUFFER)
        return tf_error (err, errlen, "stats: actions[%zu]: \"hold\" and \"tasks\" must "
                         "be 0 .. %d", i, CONFIG_MAX_BUFFER);
    if (!isfinite (a->saved_s) || !isfinite (a->cost_s) || !isfinite (a->at_s)
        || a->at_s < 0)
        return tf_error (err, errlen, "stats: actions[%zu]: \"saved_s\" and \"cost_s\" "
                         "must be finite, \"at_s\" finite and >= 0", i);
    snprintf (a->what, sizeof a->what, "%s", what);
    a->hold = (uint32_t) hold;
    a->tasks = (uint32_t) tasks;
    return 0;
}

int
proto_actions_get (const json_t *stats, proto_actions_t *out, char *err, size_t errlen)
{
    return proto_stats_get_list (stats, "actions", PROTO_MAX_ACTIONS, sizeof *out->items,
                                 get_action, (void **) &out->items, &out->n, &out->dropped,
                                 err, errlen);
}
