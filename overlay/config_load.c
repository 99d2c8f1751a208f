/*  config_load — put background load on a loaded experiment from a
 *  --load file (see config.h, config_apply_load_file, and
 *  docs/config.md, "load").
 *
 *  The file is a JSON object, node name -> load description, read with
 *  the config's strictness and messages: "loads.json: node "solo":
 *  jobs.utilization: must be at most 0.95, got 1". Every entry is read
 *  before any node's load is replaced, so a bad file leaves the config
 *  as it was.
 */
#include "overlay/config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/jsonw.h"
#include "overlay/load.h"
#include "overlay/util.h"

/*  path's directory with its slash ("loads/"), or NULL for a bare name:
 *  where a trace's relative path starts. The caller frees. */
static char *
dir_of (const char *path)
{
    const char *slash = strrchr (path, '/');
    return slash ? xasprintf ("%.*s", (int) (slash - path + 1), path) : NULL;
}

/*  Node i of the tree's nodes and then the offered ones (the nodes a
 *  load file may name). */
static config_node_t *
node_at (const config_t *self, int i)
{
    return i < self->nnodes ? &self->nodes[i] : &self->offered[i - self->nnodes];
}

/*  The index of the node called name in node_at's order, or -1. */
static int
find_any (const config_t *self, const char *name)
{
    for (int i = 0; i < self->nnodes + self->noffered; i++)
        if (strcmp (node_at (self, i)->name, name) == 0)
            return i;
    return -1;
}

/*  Each entry of the file's object into loads (by node_at's index). */
static int
parse_entries (const config_t *self, jsonw_doc_t *doc, json_t *json, const char *dir,
               load_t **loads)
{
    const char *name;
    json_t *value;
    char q[JSONW_QUOTE_LEN];
    json_object_foreach (json, name, value) {
        int i = find_any (self, name);
        if (i < 0)
            return jsonw_fail (doc, NULL, "no node named %s in %s",
                               tf_quote (q, sizeof q, name), self->path);
        jsonw_t w = {.doc = doc, .obj = value, .sep = ": "};
        snprintf (w.label, sizeof w.label, "node \"%s\"", node_at (self, i)->name);
        if (!json_is_object (value))
            return jsonw_fail (doc, w.label, "expected an object (a load), got %s",
                               jsonw_type_name (doc, value));
        if (config_node_is_relay (node_at (self, i)))
            return jsonw_fail (doc, w.label, "a relay (\"slots\": 0) computes nothing, "
                               "so a background load on it would change nothing");
        if (!(loads[i] = load_parse (&w, dir)))
            return -1;
    }
    return 0;
}

int
config_apply_load_file (config_t *self, const char *path, char *err, size_t errlen)
{
    jsonw_doc_t doc = {.style = JSONW_CONFIG, .origin = path, .err = err,
                       .errlen = errlen};
    json_error_t jerr;
    FILE *file = fopen (path, "r");
    if (!file)
        return tf_error (err, errlen, "%s: cannot open: %s", path, strerror (errno));
    json_t *json = json_loadf (file, JSON_REJECT_DUPLICATES, &jerr);
    fclose (file);
    if (!json)
        return jsonw_fail_syntax (&doc, jerr.line, jerr.column, jerr.text);
    int n = self->nnodes + self->noffered;
    load_t **loads = xcalloc ((size_t) n + 1, sizeof *loads);
    char *dir = dir_of (path);
    int rc = json_is_object (json)
                 ? parse_entries (self, &doc, json, dir, loads)
                 : jsonw_fail (&doc, NULL, "expected an object (node name -> load), got %s",
                               jsonw_type_name (&doc, json));
    for (int i = 0; i < n; i++) {
        if (rc == 0 && loads[i]) {
            load_destroy (&node_at (self, i)->load);
            node_at (self, i)->load = loads[i];
        }
        else
            load_destroy (&loads[i]);
    }
    free (dir);
    free (loads);
    json_decref (json);
    return rc;
}
