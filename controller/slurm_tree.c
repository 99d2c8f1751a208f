/*  slurm_tree — a tree made of the Slurm allocation's hosts. See
 *  slurm_tree.h.
 */
#include "controller/slurm_tree.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/host.h"
#include "overlay/util.h"

/*  The node of host i, from template: its fields but those the tree
 *  decides. */
static json_t *
host_node (const json_t *template, const slurm_alloc_t *alloc, int i, int fanout)
{
    static const char *const decided[] = {"name", "parent", "host", "slots", "joins_at_s"};
    json_t *node = json_deep_copy (template);
    for (size_t k = 0; k < sizeof decided / sizeof *decided; k++)
        json_object_del (node, decided[k]);
    int cpus = slurm_alloc_cpus (alloc, i);
    json_object_set_new (node, "name", json_string (slurm_alloc_host (alloc, i)));
    if (i > 0)
        json_object_set_new (node, "parent",
                             json_string (slurm_alloc_host (alloc, (i - 1) / fanout)));
    json_object_set_new (node, "host", json_string (HOST_SLURM_TEXT));
    json_object_set_new (node, "slots",
                         json_integer (cpus < CONFIG_MAX_SLOTS ? cpus : CONFIG_MAX_SLOTS));
    return node;
}

config_t *
slurm_tree_config (const config_t *cfg, const slurm_alloc_t *alloc, int fanout,
                   const char *origin, char *err, size_t errlen)
{
    if (fanout < 1 || fanout > SLURM_TREE_FANOUT_MAX) {
        tf_error (err, errlen, "--fanout %d: expected 1..%d", fanout, SLURM_TREE_FANOUT_MAX);
        return NULL;
    }
    char *text = config_to_json (cfg);
    json_t *root = json_loads (text, 0, NULL);
    free (text);
    json_t *old = json_object_get (root, "tree");
    if (!json_is_array (old) || json_array_size (old) == 0) {
        json_decref (root);
        tf_error (err, errlen, "%s: no tree to take the nodes' fields from", origin);
        return NULL;
    }
    const json_t *first = json_array_get (old, 0);
    const json_t *other = json_array_size (old) > 1 ? json_array_get (old, 1) : first;
    json_t *tree = json_array ();
    for (int i = 0; i < slurm_alloc_hosts (alloc); i++)
        json_array_append_new (tree, host_node (i ? other : first, alloc, i, fanout));
    json_object_set_new (root, "tree", tree);
    json_object_del (root, "offered");
    text = json_dumps (root, JSON_COMPACT);
    json_decref (root);
    config_t *out = config_load_string (text, origin, err, errlen);
    free (text);
    return out;
}
