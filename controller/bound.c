/*  bound — `treefarm bound`. See bound.h and docs/bounds.md.
 *
 *  Parses the command line, loads the config, lets overlay/bound.c do the
 *  arithmetic (and the LP with --lp), and prints the result: a table for
 *  people, with the units in the header, or JSON for scripts.
 */
#include "controller/bound.h"
#include "controller/cli.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/bound.h"
#include "overlay/config.h"
#include "overlay/load.h"
#include "overlay/util.h"

typedef struct {
    const char *config_path;
    bound_model_t model;
    int lp;
    int json;
    double send_mb;          /* --send, or NAN */
    double compute_units;    /* --compute, or NAN */
    const char *load_path;   /* --load FILE, or NULL */
    int loaded;              /* --loaded */
} bound_options_t;

/* ------------------------------------------------------------------------
 *  The table.
 */

/*  A rate for the table: "-" when infinite or not known. */
static const char *
fmt_rate (char *buf, size_t len, double value)
{
    if (!isfinite (value))
        snprintf (buf, len, "-");
    else if (value != 0 && (fabs (value) >= 1e6 || fabs (value) < 1e-3))
        snprintf (buf, len, "%.3e", value);
    else
        snprintf (buf, len, "%.4f", value);
    return buf;
}

/*  The role column: "root", "saturated", "partial: why", "unused: why". */
static const char *
fmt_role (char *buf, size_t len, const bound_entry_t *entry)
{
    if (entry->role == BOUND_ROLE_ROOT && entry->limit != BOUND_WHY_NONE)
        snprintf (buf, len, "root: %s", bound_why_str (entry->limit));
    else if (entry->why != BOUND_WHY_NONE)
        snprintf (buf, len, "%s: %s", bound_role_str (entry->role),
                  bound_why_str (entry->why));
    else
        snprintf (buf, len, "%s", bound_role_str (entry->role));
    return buf;
}

static const char *
cmp_mark (bound_lp_cmp_t cmp)
{
    return cmp == BOUND_LP_EQUAL ? "=" : cmp == BOUND_LP_BELOW ? "below" : "ABOVE";
}

/*  The heading: what the table is and what its columns mean. */
static void
print_heading (const bound_tree_t *tree, const bound_options_t *opt, FILE *out)
{
    fprintf (out, "%s (%s): %s bound (--model %s)\n", tree->cfg->name, opt->config_path,
             bound_model_title (tree->model), bound_model_str (tree->model));
    fprintf (out, "task: Z = %g MB of input (1 MB = 2^20 bytes), w = %g compute units\n",
             tree->app.input_mb, tree->app.units);
    if (tree->app.loaded)
        fprintf (out, "rates loaded (--loaded): C of a node with background load is its\n"
                 "  configured rate x its load's long-run prediction (docs/load.md)\n");
    fprintf (out,
             "rates in tasks/s: C computed alone; B_r most received from the parent;\n"
             "  IR_sZC compute fraction the parent loses per task/s sent to the node%s;\n"
             "  That the bound of the node's subtree; T through the node and S computed\n"
             "  at it in a schedule reaching the root's bound; share = S / T(root)\n\n",
             tree->model != BOUND_BWC ? "" : " (unused)");
}

/*  One node's row, indented by depth within a name column of width. */
static void
print_row (const bound_tree_t *tree, const bound_entry_t *entry, int width, int lp,
           FILE *out)
{
    char a[32], b[32], c[32], d[32], e[32], f[32], role[128], load[32];
    const config_node_t *node = entry->config;
    if (node->parent < 0 || tree->model == BOUND_BWC)
        snprintf (load, sizeof load, "-");
    else
        snprintf (load, sizeof load, "%.4f", entry->load);
    fprintf (out, "%*s%-*s %10s %10s %7s %10s %10s %10s %5.1f%%", 2 * node->depth, "",
             width - 2 * node->depth, node->name,
             fmt_rate (a, sizeof a, entry->node.compute),
             fmt_rate (b, sizeof b, entry->node.recv_max), load,
             fmt_rate (c, sizeof c, entry->that), fmt_rate (d, sizeof d, entry->t),
             fmt_rate (e, sizeof e, entry->s), 100 * entry->share);
    if (lp)
        fprintf (out, " %10s %5s", fmt_rate (f, sizeof f, entry->lp_that),
                 cmp_mark (bound_lp_compare (entry->that, entry->lp_that)));
    fprintf (out, "  %s\n", fmt_role (role, sizeof role, entry));
}

/*  The bound in tasks, units and MB per second; the LP's verdict. */
static void
print_footer (const bound_tree_t *tree, int lp, FILE *out)
{
    char a[32], b[32], c[32];
    const bound_entry_t *root = &tree->nodes[tree->cfg->root];
    fprintf (out, "\nbound: T(root) = %s tasks/s = %s compute units/s, "
             "%s MB/s of task input\n",
             fmt_rate (a, sizeof a, tree->bound),
             fmt_rate (b, sizeof b, tree->bound * tree->app.units),
             fmt_rate (c, sizeof c, tree->bound * tree->app.input_mb));
    if (isfinite (root->node.send_max) && tree->model == BOUND_MULTI)
        fprintf (out, "root send limit B_s = %s tasks/s\n",
                 fmt_rate (a, sizeof a, root->node.send_max));
    if (!lp)
        return;
    double rel;
    bound_lp_cmp_t verdict = bound_tree_lp_verdict (tree, &rel);
    fprintf (out, "LP (GLPK %s): T(root) = %s tasks/s; greedy %s LP %s "
             "(largest relative difference %.1e, tolerance %.0e)\n",
             bound_lp_version (), fmt_rate (a, sizeof a, tree->lp_bound),
             verdict == BOUND_LP_EQUAL ? "and" : verdict == BOUND_LP_BELOW ? "below"
                                                                           : "ABOVE",
             verdict == BOUND_LP_EQUAL ? "equal at every node" : "at some node", rel,
             BOUND_LP_TOL);
}

static void
print_table (const bound_tree_t *tree, const bound_options_t *opt, FILE *out)
{
    print_heading (tree, opt, out);
    int width = 4;
    for (int k = 0; k < tree->nnodes; k++) {
        const config_node_t *node = &tree->cfg->nodes[tree->order[k]];
        int w = 2 * node->depth + (int) strlen (node->name);
        if (w > width)
            width = w;
    }
    fprintf (out, "%-*s %10s %10s %7s %10s %10s %10s %6s", width, "node", "C", "B_r",
             "IR_sZC", "That", "T", "S", "share");
    if (opt->lp)
        fprintf (out, " %10s %5s", "LP That", "check");
    fprintf (out, "  role\n");
    for (int k = 0; k < tree->nnodes; k++)
        print_row (tree, &tree->nodes[tree->order[k]], width, opt->lp, out);
    print_footer (tree, opt->lp, out);
}

/* ------------------------------------------------------------------------
 *  JSON.
 */

/*  A number, or null when infinite or not known (JSON has neither). */
static json_t *
json_rate (double value)
{
    return isfinite (value) ? json_real (value) : json_null ();
}

static json_t *
json_why (bound_why_t why)
{
    return why == BOUND_WHY_NONE ? json_null () : json_string (bound_why_str (why));
}

/*  One node's entry in the bound's JSON (tree order k). */
static json_t *
bound_node_to_json (const bound_tree_t *tree, const bound_options_t *opt, int k)
{
    int ia = tree->model != BOUND_BWC;
    const bound_entry_t *entry = &tree->nodes[tree->order[k]];
    const config_node_t *node = entry->config;
    json_t *item = json_pack (
        "{s:s, s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o}",
        "name", node->name,
        "parent", node->parent_name ? json_string (node->parent_name) : json_null (),
        "depth", node->depth,
        "compute", json_rate (entry->node.compute),
        "recv_max", json_rate (entry->node.recv_max),
        "send_max", json_rate (entry->node.send_max),
        "load", node->parent >= 0 && ia ? json_real (entry->load) : json_null (),
        "that", json_rate (entry->that),
        "that_limit", json_why (entry->that_limit),
        "t", json_rate (entry->t),
        "s", json_rate (entry->s),
        "share", json_real (entry->share),
        "role", bound_role_str (entry->role),
        "why", json_why (entry->why),
        "limit", json_why (entry->limit));
    json_object_set_new (item, "load_kind", json_string (load_kind_str (node->load)));
    if (opt->lp) {
        json_object_set_new (item, "lp_that", json_rate (entry->lp_that));
        bound_lp_cmp_t cmp = bound_lp_compare (entry->that, entry->lp_that);
        json_object_set_new (item, "lp", json_string (bound_lp_cmp_str (cmp)));
    }
    return item;
}

static json_t *
bound_to_json (const bound_tree_t *tree, const bound_options_t *opt)
{
    const config_t *cfg = tree->cfg;
    json_t *nodes = json_array ();
    for (int k = 0; k < tree->nnodes; k++)
        json_array_append_new (nodes, bound_node_to_json (tree, opt, k));
    json_t *root = json_pack (
        "{s:s, s:s, s:s, s:s, s:{s:f, s:f}, s:s, s:f, s:f, s:f, s:o}",
        "experiment", cfg->name,
        "config", opt->config_path,
        "model", bound_model_str (tree->model),
        "model_title", bound_model_title (tree->model),
        "task", "input_mb", tree->app.input_mb, "units", tree->app.units,
        "rate_unit", "tasks/s",
        "bound", tree->bound,
        "bound_units_per_s", tree->bound * tree->app.units,
        "bound_input_mbps", tree->bound * tree->app.input_mb,
        "nodes", nodes);
    json_object_set_new (root, "loaded", json_boolean (tree->app.loaded));
    if (opt->lp) {
        double rel;
        bound_lp_cmp_t verdict = bound_tree_lp_verdict (tree, &rel);
        json_object_set_new (
            root, "lp",
            json_pack ("{s:s, s:o, s:s, s:f, s:f}", "solver",
                       "GLPK", "bound", json_rate (tree->lp_bound), "verdict",
                       bound_lp_cmp_str (verdict), "max_rel_diff", rel, "tolerance",
                       BOUND_LP_TOL));
        json_object_set_new (json_object_get (root, "lp"), "version",
                             json_string (bound_lp_version ()));
    }
    return root;
}

/* ------------------------------------------------------------------------
 *  The command line.
 */

static void
usage (FILE *out)
{
    fprintf (out,
             "usage: treefarm bound CONFIG [--model multi|single|bwc] [--lp] [--json]\n"
             "                             [--send MB] [--compute UNITS]\n"
             "                             [--load FILE] [--loaded]\n"
             "\n"
             "Compute the steady-state throughput upper bound of CONFIG's tree,\n"
             "bottom-up (docs/bounds.md), and print it per node: compute rate, link,\n"
             "subtree bound, what each node computes in a schedule reaching the bound,\n"
             "and which children are saturated, partial or unused, and why. Rates are\n"
             "in tasks/s.\n"
             "\n"
             "options:\n"
             "  --model NAME     multi   multi-port, interference-aware (default)\n"
             "                   single  single-port, interference-aware\n"
             "                   bwc     classic bandwidth-centric, no interference\n"
             "  --lp             also solve the model as linear programs (GLPK) and\n"
             "                   compare every node's bound with the greedy's\n"
             "  --json           print JSON instead of the table\n"
             "  --send MB        task input size Z instead of tasks.input_mb\n"
             "                   (MB = 2^20 bytes; 0: tasks carry no data)\n"
             "  --compute UNITS  compute units w per task instead of tasks.units\n"
             "  --load FILE      background load on nodes: a JSON object, node name ->\n"
             "                   load, replacing the config's (docs/config.md, \"load\")\n"
             "  --loaded         price each node with background load at its predicted\n"
             "                   long-run rate, C x (1 - U) / slowdown / L (docs/load.md);\n"
             "                   without it, rates are as configured (dedicated)\n"
             "  -h, --help       show this help\n"
             "\n"
             "exit status: 0 done (a greedy below the LP is flagged, not an error),\n"
             "1 --lp found the greedy above the LP (a bug) or GLPK failed,\n"
             "2 bad usage or config.\n");
}


/*  The config, with --load's background load on it; NULL after saying
 *  why. */
static config_t *
bound_load_config (const bound_options_t *opt)
{
    char err[TF_ERRLEN];
    config_t *cfg = config_load_file (opt->config_path, err, sizeof err);
    if (cfg && opt->load_path
        && config_apply_load_file (cfg, opt->load_path, err, sizeof err) != 0)
        config_destroy (&cfg);
    if (!cfg)
        fprintf (stderr, "treefarm: %s\n", err);
    return cfg;
}

/*  The config, with a task size to bound with (its tasks section, or
 *  --compute); NULL after saying why not. */
static config_t *
bound_sized_config (const bound_options_t *opt)
{
    config_t *cfg = bound_load_config (opt);
    if (cfg && cfg->tasks.count == 0 && isnan (opt->compute_units)) {
        /*  A config for command tasks: their sizes are measured in a run. */
        fprintf (stderr, "treefarm bound: %s has no \"tasks\" section, so no task size to "
                 "bound with: give --compute UNITS (and --send MB, else 0)\n",
                 opt->config_path);
        config_destroy (&cfg);
    }
    return cfg;
}

/*  Compute and print. Returns the exit code. */
static int
bound_execute (const bound_options_t *opt)
{
    char err[TF_ERRLEN];
    int code = BOUND_EXIT_OK;
    bound_tree_t *tree = NULL;
    config_t *cfg = bound_sized_config (opt);
    if (!cfg)
        return BOUND_EXIT_USAGE;
    bound_app_t app = {
        .input_mb = isnan (opt->send_mb) ? cfg->tasks.input_mb : opt->send_mb,
        .units = isnan (opt->compute_units) ? cfg->tasks.units : opt->compute_units,
        .loaded = opt->loaded,
    };
    tree = bound_tree_new (cfg, opt->model, &app, err, sizeof err);
    if (!tree) {
        fprintf (stderr, "treefarm: %s: %s\n", opt->config_path, err);
        code = BOUND_EXIT_USAGE;
        goto out;
    }
    if (opt->lp) {
        int rc = bound_tree_check_lp (tree, err, sizeof err);
        if (rc != 0) {
            fprintf (stderr, "treefarm bound: %s\n", err);
            code = BOUND_EXIT_LP_ABOVE;
            goto out;
        }
        if (bound_tree_lp_verdict (tree, NULL) == BOUND_LP_ABOVE)
            code = BOUND_EXIT_LP_ABOVE;
    }
    if (opt->json) {
        json_t *doc = bound_to_json (tree, opt);
        char *text = json_dumps (doc, JSON_INDENT (2) | JSON_PRESERVE_ORDER
                                          | JSON_REAL_PRECISION (15));
        fputs (text, stdout);
        fputc ('\n', stdout);
        free (text);
        json_decref (doc);
    }
    else
        print_table (tree, opt, stdout);
    if (code == BOUND_EXIT_LP_ABOVE)
        fprintf (stderr, "treefarm bound: the greedy claims more than the LP allows "
                 "(a bug; please report it with the config)\n");
out:
    if (opt->lp)
        bound_lp_cleanup ();
    bound_tree_destroy (&tree);
    config_destroy (&cfg);
    return code;
}

int
bound_main (int argc, char **argv)
{
    const char *model = NULL, *path = NULL;
    bound_options_t opt = {
        .model = BOUND_MULTI, .send_mb = NAN, .compute_units = NAN,
    };
    const cli_option_t options[] = {
        {"model", CLI_STRING, &model, NULL},
        {"lp", CLI_FLAG, &opt.lp, NULL},
        {"json", CLI_FLAG, &opt.json, NULL},
        {"send", CLI_NONNEGATIVE, &opt.send_mb, "a size >= 0 MB"},
        {"compute", CLI_POSITIVE, &opt.compute_units, "a number of units > 0"},
        {"load", CLI_STRING, &opt.load_path, NULL},
        {"loaded", CLI_FLAG, &opt.loaded, NULL},
    };
    int code = cli_parse ("bound", argc, argv, options, sizeof options / sizeof *options,
                          usage, &path);
    if (code >= 0)
        return code;
    if (model && bound_model_parse (model, &opt.model) != 0)
        return cli_usage_error ("bound", BOUND_EXIT_USAGE,
                                "--model: unknown model \"%s\" (expected multi, "
                                "single or bwc)", model);
    opt.config_path = path;
    return bound_execute (&opt);
}
