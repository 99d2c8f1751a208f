/*  session_prepare — a session before anything starts (session_int.h):
 *  the experiment loaded and checked, every host checked for deployment
 *  and the node's command line, the results directory, the CURVE
 *  certificates; and the session's teardown.
 */
#include "controller/session_int.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller/cli.h"
#include "overlay/load.h"
#include "overlay/util.h"

/*  The largest experiment, as JSON, a CONFIG carries: its body's limit
 *  less 1 MiB for the run object and the nodes' keys. */
#define SESSION_MAX_SHIPPED (PROTO_MAX_BODY - (1u << 20))


/*  The node binary: --node-bin, $TREEFARM_NODE, the treefarm-node next to
 *  this executable, or treefarm-node on PATH. Returns a new string. */
static char *
find_node_bin (const char *option)
{
    return cli_find_program (option, "TREEFARM_NODE", "treefarm-node");
}

/*  $TREEFARM_NODE_WRAPPER's words, then the node binary: the start of
 *  every node's command line. */
static void
build_node_argv (session_t *self, char *node_bin)
{
    const char *wrapper = getenv ("TREEFARM_NODE_WRAPPER");
    char *words = xstrdup (wrapper ? wrapper : "");
    int n = 0;
    self->setup.node_argv = xcalloc (strlen (words) / 2 + 3, sizeof *self->setup.node_argv);
    char *save = NULL;
    for (char *w = strtok_r (words, " \t", &save); w; w = strtok_r (NULL, " \t", &save))
        self->setup.node_argv[n++] = xstrdup (w);
    self->setup.node_argv[n++] = node_bin;
    self->setup.node_argc = n;
    free (words);
}


/* ------------------------------------------------------------------------
 *  Setting up, and tearing down.
 */

int
session_curve_flags (const char *command, int on, int off, session_curve_t *out)
{
    if (on && off)
        return cli_usage_error (command, CLI_EXIT_USAGE, "--curve and --no-curve "
                                "contradict each other");
    *out = on ? SESSION_CURVE_ON : off ? SESSION_CURVE_OFF : SESSION_CURVE_AUTO;
    return -1;
}

/*  Every node gets the experiment in its CONFIG, traces inline: text
 *  (config_to_json) must fit in one message, with room for the run
 *  object and the keys. Returns 0, or -1 with a message. */
static int
check_shippable (const config_t *cfg, const char *path, const char *text, char *err,
                 size_t errlen)
{
    size_t len = strlen (text);
    if (len <= SESSION_MAX_SHIPPED)
        return 0;
    long rows = 0;
    for (int i = 0; i < cfg->nnodes; i++)
        rows += cfg->nodes[i].load ? cfg->nodes[i].load->ntrace : 0;
    return tf_error (err, errlen, "%s: the experiment is %zu bytes as each node receives it "
                     "(%ld load trace rows inline), over the %u bytes one CONFIG may "
                     "carry: use fewer or shorter traces", path, len, rows,
                     (unsigned) SESSION_MAX_SHIPPED);
}

config_t *
session_load_config (const char *path, const char *load_path)
{
    char err[TF_ERRLEN];
    config_t *cfg = config_load_file (path, err, sizeof err);
    if (cfg && load_path && config_apply_load_file (cfg, load_path, err, sizeof err))
        config_destroy (&cfg);
    if (cfg && config_check_emulation (cfg, err, sizeof err) != 0)
        config_destroy (&cfg);
    if (cfg && config_kernel_shaped (cfg)
        && (cfg->platform.time_scale != 1 || cfg->platform.payload_scale != 1)) {
        snprintf (err, sizeof err, "%s: every host is netns: (the kernel testbed, which "
                  "shapes links at platform rates): time_scale and payload_scale must "
                  "be 1", path);
        config_destroy (&cfg);
    }
    if (!cfg)
        session_log (NULL, "%s", err);
    return cfg;
}

/*  Every node can be placed on its host and its program runs there, the
 *  checks of docs/deploy.md, before anything starts: slot i is node i. */
static int
check_deployable (session_t *self, char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    build_node_argv (self, find_node_bin (self->opt.node_bin));
    for (int i = 0; i < self->cfg->nnodes; i++) {
        const config_node_t *node = &self->cfg->nodes[i];
        int slot = deploy_add (self->setup.deploy, node->name, node->host, why, sizeof why);
        assert (slot < 0 || slot == i);
        if (slot < 0
            || deploy_check (self->setup.deploy, slot, self->setup.node_argv, self->setup.node_argc, why,
                             sizeof why) != 0)
            return tf_error (err, errlen, "%s: tree[%d] (node \"%s\"): %s",
                             self->opt.config_path, i, node->name, why);
    }
    /*  The offered nodes (joins_at_s) are checked now too, each in the
     *  slot after the tree's: a bad host is said before the run, not
     *  when its turn comes. */
    for (int k = 0; k < self->cfg->noffered; k++) {
        const config_node_t *node = &self->cfg->offered[k];
        int slot = deploy_add (self->setup.deploy, node->name, node->host, why, sizeof why);
        assert (slot < 0 || slot == self->cfg->nnodes + k);
        if (slot < 0
            || deploy_check (self->setup.deploy, slot, self->setup.node_argv,
                             self->setup.node_argc, why, sizeof why) != 0)
            return tf_error (err, errlen, "%s: offered node \"%s\": %s",
                             self->opt.config_path, node->name, why);
    }
    for (int i = 0; i < self->cfg->nnodes; i++) {
        const config_node_t *node = &self->cfg->nodes[i];
        if (deploy_route (self->setup.deploy, i, node->children, node->nchildren, why,
                          sizeof why) != 0)
            return tf_error (err, errlen, "%s: tree[%d] (node \"%s\"): %s",
                             self->opt.config_path, i, node->name, why);
    }
    for (int i = 0; i < self->cfg->nnodes + self->cfg->noffered; i++)
        session_say_target (self, i, session_slot_name (self, i));
    return 0;
}

void
session_say_target (session_t *self, int slot, const char *name)
{
    const char *target = deploy_target (self->setup.deploy, slot);
    if (target)
        session_log (self, "%s: %s -> %s", name, deploy_host (self->setup.deploy, slot),
                     target);
}

const char *
session_slot_name (const session_t *self, int slot)
{
    const config_t *cfg = self->cfg;
    return slot < cfg->nnodes ? cfg->nodes[slot].name : cfg->offered[slot - cfg->nnodes].name;
}

/*  Is CURVE on for this run: asked for, or by default when a node is on
 *  another machine, an ssh or slurm host (docs/security.md)? */
static int
curve_wanted (session_t *self)
{
    if (self->opt.curve != SESSION_CURVE_AUTO)
        return self->opt.curve == SESSION_CURVE_ON;
    for (int i = 0; i < self->cfg->nnodes; i++)
        if (deploy_kind (self->setup.deploy, i) == HOST_SSH
            || deploy_kind (self->setup.deploy, i) == HOST_SLURM)
            return 1;
    return 0;
}

/*  --slurm: the nodes the allocation places are those on host slurm, or
 *  every node of the tree when none names a host. Without --slurm, or
 *  for a node offered during the run, host slurm is refused by the
 *  deployment's check. Returns 0, or -1 with a message in err. */
static int
claim_slurm_nodes (config_t *cfg, const char *path, char *err, size_t errlen)
{
    int named = 0, placed = 0;
    for (int i = 0; i < cfg->nnodes; i++) {
        named |= strcmp (cfg->nodes[i].host, CONFIG_DEFAULT_HOST) != 0;
        placed += strcmp (cfg->nodes[i].host, HOST_SLURM_TEXT) == 0;
    }
    for (int i = 0; !named && i < cfg->nnodes; i++) {
        free (cfg->nodes[i].host);
        cfg->nodes[i].host = xstrdup (HOST_SLURM_TEXT);
        placed++;
    }
    for (int k = 0; k < cfg->noffered; k++)
        if (strcmp (cfg->offered[k].host, HOST_SLURM_TEXT) == 0)
            return tf_error (err, errlen, "%s: offered node \"%s\": host slurm: a node "
                             "cannot join the Slurm step once it runs (not yet)", path,
                             cfg->offered[k].name);
    if (placed == 0)
        return tf_error (err, errlen, "%s: --slurm: no node has host \"slurm\" (and "
                         "some name a host, so not every node is placed)", path);
    return 0;
}

/*  With CURVE, the run's certificates in OUT/.curve, each node's given to
 *  the deployment, which takes it to the node (deploy_set_cert). */
static int
make_certs (session_t *self, char *err, size_t errlen)
{
    char why[TF_ERRLEN];
    self->setup.curve = curve_wanted (self);
    results_set_curve (self->results, self->setup.curve);
    if (!self->setup.curve)
        return 0;
    /*  The offered nodes' keys too, in their deploy slots: the tree
     *  admits them wherever they join (docs/security.md). */
    int n = self->cfg->nnodes + self->cfg->noffered;
    const char **names = xcalloc ((size_t) n, sizeof *names);
    for (int i = 0; i < n; i++)
        names[i] = session_slot_name (self, i);
    char *dir = xasprintf ("%s/%s", self->dir, CURVE_DIR_NAME);
    self->setup.certs = curve_run_new (dir, names, n, why, sizeof why);
    free (dir);
    int rc = self->setup.certs ? 0 : tf_error (err, errlen, "cannot make the run's CURVE "
                                               "certificates: %s", why);
    if (rc == 0)
        self->setup.keys = curve_run_keys (self->setup.certs);
    for (int i = 0; rc == 0 && i < n; i++)
        if (deploy_set_cert (self->setup.deploy, i, self->setup.certs, i, why,
                             sizeof why) != 0)
            rc = tf_error (err, errlen, "%s: node \"%s\": %s", self->opt.config_path,
                           names[i], why);
    free (names);
    return rc;
}

/*  The experiment as the CONFIG object every node receives, with the
 *  nodes --slurm places on host slurm, or NULL after saying why. */
static json_t *
config_object_of (config_t *cfg, const session_opts_t *opt)
{
    char err[TF_ERRLEN];
    const char *path = opt->config_path;
    if (opt->slurm && claim_slurm_nodes (cfg, path, err, sizeof err) != 0) {
        session_log (NULL, "%s", err);
        return NULL;
    }
    char *text = config_to_json (cfg);
    if (check_shippable (cfg, path, text, err, sizeof err) != 0) {
        session_log (NULL, "%s", err);
        free (text);
        return NULL;
    }
    json_t *object = json_loads (text, 0, NULL);
    free (text);
    if (!json_is_object (object)) {
        session_log (NULL, "%s: cannot represent the experiment as JSON", path);
        json_decref (object);
        return NULL;
    }
    return object;
}

session_t *
session_new (const session_opts_t *opt, config_t **cfg_p)
{
    char err[TF_ERRLEN];
    session_t *self = xcalloc (1, sizeof *self);
    self->t.created = tf_now ();
    self->opt = *opt;
    self->link.refusals = ratelog_init (RATELOG_BURST, RATELOG_WINDOW);
    self->cfg = *cfg_p;
    *cfg_p = NULL;
    if (!(self->config_object = config_object_of (self->cfg, opt)))
        goto out_fail;
    deploy_opts_t dopts = {.ssh_config = opt->ssh_config,
                           .push_binary = opt->push_binary,
                           .slurm = opt->slurm};
    self->setup.deploy = deploy_new (&dopts);
    if (check_deployable (self, err, sizeof err) != 0) {
        session_log (NULL, "%s", err);
        goto out_fail;
    }
    self->dir = opt->out_dir ? xstrdup (opt->out_dir)
                             : results_default_dir (self->cfg->name, time (NULL));
    if (results_make_dir (self->dir, err, sizeof err) != 0) {
        session_log (NULL, "cannot create the results directory: %s", err);
        goto out_fail;
    }
    if (results_check_writable (self->dir, err, sizeof err) != 0) {
        session_log (NULL, "cannot write into the results directory: %s", err);
        goto out_fail;
    }
    self->results = results_new (self->cfg);
    if (make_certs (self, err, sizeof err) != 0) {
        session_log (NULL, "%s", err);
        goto out_fail;
    }
    int room = self->cfg->capacity > self->cfg->nnodes ? self->cfg->capacity
                                                       : self->cfg->nnodes;
    self->peers = xcalloc ((size_t) room, sizeof *self->peers);
    for (int i = 0; i < room; i++)
        self->peers[i].slot = -1;
    for (int i = 0; i < self->cfg->nnodes; i++) {
        self->peers[i].node = &self->cfg->nodes[i];
        self->peers[i].slot = -1;
    }
    return self;
out_fail:
    session_destroy (&self);
    return NULL;
}

void
session_destroy (session_t **self_p)
{
    session_t *self = *self_p;
    if (!self)
        return;
    session_join_close (self);
    deploy_destroy (&self->setup.deploy);
    zpoller_destroy (&self->link.poller);
    zsock_destroy (&self->link.control);
    zactor_destroy (&self->link.auth);   /* after the socket it guards */
    curve_auth_dir_remove (self->link.zap_dir);
    free (self->link.zap_dir);
    curve_run_destroy (&self->setup.certs);
    json_decref (self->setup.keys);
    zhashx_destroy (&self->link.controls);
    results_destroy (&self->results);
    if (self->peers)
        for (int i = 0; i < self->cfg->nnodes; i++)
            free (self->peers[i].endpoint);
    free (self->peers);
    for (int i = 0; i < self->setup.node_argc; i++)
        free (self->setup.node_argv[i]);
    free (self->setup.node_argv);
    json_decref (self->config_object);
    json_decref (self->run);
    free (self->pending.text);
    free (self->dir);
    config_destroy (&self->cfg);
    free (self);
    *self_p = NULL;
}
