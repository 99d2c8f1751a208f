/*  results_summary — the summary printed at the end of a run: the
 *  outcome, the bound and an emulation's fidelity, the per-node table,
 *  the links, the failed commands and the lost nodes (results.h,
 *  results_print_summary).
 */
#include "controller/results_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/util.h"

#define NCOLS 8
#define CELL 32

static const char *const column_names[NCOLS] = {
    "node", "parent", "computed", "forwarded", "received", "MB in", "MB out", "share",
};

/*  Achieved against the bound of the policy's port model. */
static void
print_bound (const results_t *self, double span, FILE *out)
{
    const config_t *cfg = self->cfg;
    const results_stats_t *root = &self->nodes[cfg->root].stats;
    bound_model_t model = results_policy_model (cfg);
    double bound = self->offline[model], grown;
    if (!isfinite (bound)) {   /* a command run that ended before any command did */
        fprintf (out, "\n  bound: none%s", self->cmds.measured_bound
                 ? " (it rests on the commands' measured times, and none finished)" : "");
        return;
    }
    fprintf (out, "\n  bound %.3f tasks/s (%s)", bound, bound_model_title (model));
    double judged = results_judged_bound (self, &grown);
    if (judged != bound) {   /* nodes joined: judged as the platform grew */
        fprintf (out, "\n  grown to %.3f tasks/s as nodes joined; as it grew, %.3f on "
                 "average", grown, judged);
        bound = judged;
    }
    if (span > 0 && bound > 0 && results_ran (self) > 0)
        fprintf (out, "  efficiency %.1f%%%s", 100.0 * results_ran (self) / span / bound,
                 results_reliable (self) ? "" : " (UNRELIABLE)");
    double throughput, efficiency;
    if (span > 0 && results_steady (self, judged != self->offline[model] ? grown : bound,
                                    &throughput, &efficiency) == 0
        && isfinite (efficiency))
        fprintf (out, "  steady %.1f%%", 100.0 * efficiency);
    if (self->cmds.measured_bound)
        fprintf (out, "  [from the commands' measured times and sizes]");
    else if (root->has_bound
             && !results_bounds_agree (root->bound[model], self->planned[model]))
        fprintf (out, "  [the tree computed %.6f: DIFFERS]", root->bound[model]);
    else if (!root->has_bound && !self->simulated)
        fprintf (out, "  [the tree reported no bound]");
}

/*  The commands that failed after their last attempt, a few named. */
static void
print_failures (const results_t *self, FILE *out)
{
    if (self->cmds.failed == 0)
        return;
    fprintf (out, "\n  failed: %llu of %llu commands:", (unsigned long long) self->cmds.failed,
             (unsigned long long) self->cfg->commands.count);
    size_t i;
    json_t *f;
    json_array_foreach (self->cmds.failures, i, f) {
        if (i == RESULTS_FAILURES_SHOWN) {
            fprintf (out, " ... (all in tasks.csv)");
            break;
        }
        json_t *code = json_object_get (f, "exit");
        fprintf (out, "%s %s (%s", i ? "," : "", json_string_value (json_object_get (f, "id")),
                 results_command_status (f));
        if (json_is_integer (code))
            fprintf (out, " %lld", (long long) json_integer_value (code));
        fprintf (out, ")");
    }
    fputc ('\n', out);
}

/*  The nodes lost during the run, each with why; and what the bound the
 *  run is judged against assumed. */
static void
print_lost (const results_t *self, FILE *out)
{
    if (self->nlost == 0)
        return;
    fprintf (out, "\n  lost: %d node%s:", self->nlost, self->nlost == 1 ? "" : "s");
    for (int i = 0, k = 0; i < self->cfg->nnodes; i++)
        if (self->nodes[i].lost_why)
            fprintf (out, "%s %s (%s, at %.1f s)", k++ ? "," : "", self->cfg->nodes[i].name,
                     self->nodes[i].lost_why, self->nodes[i].lost_at);
    fprintf (out, "\n  their tasks were queued again; the bound is the whole tree's\n");
}

/*  "fidelity F (worst: NODE)", and when it is below the threshold, why the
 *  efficiency cannot be trusted and what to do. Only for an emulation:
 *  fidelity is how well it kept up with the clock it emulates, and a real
 *  run or a simulation has no such clock (results.json keeps the figure,
 *  docs/architecture.md, "Fidelity"). */
static void
print_fidelity (const results_t *self, FILE *out)
{
    if (!(self->wall_s > 0) || self->simulated
        || self->cfg->platform.mode != PLATFORM_EMULATED)
        return;
    int worst;
    double f = results_fidelity (self, &worst);
    fprintf (out, "  fidelity %.3f", f);
    if (worst >= 0)
        fprintf (out, " (worst: %s)", self->cfg->nodes[worst].name);
    if (!results_reliable (self))
        fprintf (out, " < %.2f: the emulation fell behind its clock, so the "
                 "efficiency is UNRELIABLE;\n  lower time_scale (now %g) or run fewer "
                 "nodes on this machine", RESULTS_FIDELITY_MIN,
                 self->cfg->platform.time_scale);
    fputc ('\n', out);
}

/*  The header line: outcome, makespan, wall time, throughput. */
static void
print_header (const results_t *self, FILE *out)
{
    const config_t *cfg = self->cfg;
    const results_stats_t *root = &self->nodes[cfg->root].stats;
    double span = results_makespan (self);
    fprintf (out, "%s/%s: %s", cfg->name, cfg->policy, results_status_str (self->status));
    if (self->error && strcmp (self->error, results_status_str (self->status)) != 0)
        fprintf (out, " (%s)", self->error);
    fprintf (out, "\n  %llu/%llu tasks", (unsigned long long) root->completed,
             (unsigned long long) config_bag_size (cfg));
    if (self->resumed)
        fprintf (out, " (%llu of them done before: resumed)",
                 (unsigned long long) self->resumed);
    if (span >= 0)
        fprintf (out, "  makespan %.2f s (platform)", span);
    if (!self->simulated)
        fprintf (out, "  wall %.2f s", self->wall_s);
    if (span > 0 && results_ran (self) > 0)
        fprintf (out, "  throughput %.3f tasks/s (platform)",
                 (double) results_ran (self) / span);
    if (root->duplicates)
        fprintf (out, "  %llu duplicates", (unsigned long long) root->duplicates);
    print_bound (self, span, out);
    if (self->simulated)
        fprintf (out, "  [simulated]");
    else if (cfg->platform.time_scale != 1)
        fprintf (out, "  [time scale %g]", cfg->platform.time_scale);
    fputc ('\n', out);
    if (isfinite (results_live_bound (self)))
        fprintf (out, "  live bound %.3f tasks/s (the platform as the tree saw it last)\n",
                 results_live_bound (self));
    print_fidelity (self, out);
}

/*  Every link that carried a task: what its parent sent and how fast,
 *  beside the configured rate, in platform terms. */
static void
print_links (const results_t *self, FILE *out)
{
    int width = 4, any = 0;
    for (int i = 0; i < self->cfg->nnodes; i++)
        for (int c = 0; c < self->nodes[i].nchildren; c++) {
            int len = (int) strlen (self->nodes[i].children[c].name);
            width = len > width ? len : width;
            any |= self->nodes[i].children[c].tasks > 0;
        }
    if (!any)
        return;
    fprintf (out, "  %-*s  %6s  %9s  %9s  %12s  %11s\n", width, "link", "tasks", "MB",
             "sending s", "MB/s sending", "MB/s config");
    for (int i = 0; i < self->cfg->nnodes; i++)
        for (int c = 0; c < self->nodes[i].nchildren; c++) {
            json_t *o = results_child_to_json (self, &self->nodes[i].children[c]);
            json_t *rate = json_object_get (o, "rate_mbps");
            json_t *link = json_object_get (o, "link_mbps");
            fprintf (out, "  %-*s  %6lld  %9.1f  %9.2f  ", width,
                     json_string_value (json_object_get (o, "name")),
                     (long long) json_integer_value (json_object_get (o, "tasks")),
                     json_number_value (json_object_get (o, "mb")),
                     json_number_value (json_object_get (o, "send_s")));
            if (json_is_number (rate))
                fprintf (out, "%12.2f", json_number_value (rate));
            else
                fprintf (out, "%12s", "-");
            fprintf (out, "  %11.2f\n", json_is_number (link) ? json_number_value (link) : 0);
            json_decref (o);
        }
}

/*  One line per node with background load: its compute rate as
 *  configured, as its load predicts it, as it measured it, and the
 *  background's realized share ("-" where unknown). Nothing for a run
 *  without load. */
static void
print_loaded (const results_t *self, FILE *out)
{
    for (int i = 0; i < self->cfg->nnodes; i++) {
        if (!self->cfg->nodes[i].load)
            continue;
        results_rate_t r = results_node_rate (self, i);
        fprintf (out, "  %s: compute %.1f configured, ", self->cfg->nodes[i].name,
                 r.configured);
        if (isfinite (r.predicted))
            fprintf (out, "%.1f predicted, ", r.predicted);
        else
            fprintf (out, "- predicted, ");
        if (isfinite (r.measured) && isfinite (r.measured_se))
            fprintf (out, "%.1f +- %.1f measured", r.measured, r.measured_se);
        else if (isfinite (r.measured))
            fprintf (out, "%.1f measured", r.measured);
        else
            fprintf (out, "- measured");
        fprintf (out, " (load %s, U ", r.kind ? r.kind : "-");
        if (isfinite (r.utilization))
            fprintf (out, "%.2f)\n", r.utilization);
        else
            fprintf (out, "-)\n");
    }
}

/*  The per-node table's cells, a header row then one row per node, into
 *  cells (nnodes + 1 rows). */
static void
fill_cells (const results_t *self, char (*cells)[NCOLS][CELL])
{
    const config_t *cfg = self->cfg;
    uint64_t total = 0;
    for (int i = 0; i < cfg->nnodes; i++)
        total += self->nodes[i].stats.computed;
    for (int c = 0; c < NCOLS; c++)
        snprintf (cells[0][c], CELL, "%s", column_names[c]);
    double scale = cfg->platform.payload_scale * CONFIG_MB;
    for (int i = 0; i < cfg->nnodes; i++) {
        const results_stats_t *s = &self->nodes[i].stats;
        const config_node_t *node = &cfg->nodes[i];
        char (*row)[CELL] = cells[i + 1];
        /*  Indent by depth so the tree shows. */
        int indent = node->depth < 8 ? 2 * node->depth : 16;
        snprintf (row[0], CELL, "%*s%s%s%s", indent, "", node->name,
                  config_node_is_relay (node) ? " (relay)" : "",
                  self->nodes[i].lost_why ? " (lost)" : "");
        snprintf (row[1], CELL, "%s", node->parent_name ? node->parent_name : "-");
        snprintf (row[2], CELL, "%llu", (unsigned long long) s->computed);
        snprintf (row[3], CELL, "%llu", (unsigned long long) s->forwarded);
        snprintf (row[4], CELL, "%llu", (unsigned long long) s->received);
        snprintf (row[5], CELL, "%.1f", (double) s->bytes_in / scale);
        snprintf (row[6], CELL, "%.1f", (double) s->bytes_out / scale);
        if (total)
            snprintf (row[7], CELL, "%.1f%%", 100.0 * (double) s->computed / (double) total);
        else
            snprintf (row[7], CELL, "-");
    }
}

/*  Print rows of cells as a table, each column as wide as its widest
 *  cell: names left-aligned, numbers right-aligned. */
static void
print_cells (char (*cells)[NCOLS][CELL], int rows, FILE *out)
{
    int width[NCOLS] = {0};
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < NCOLS; c++) {
            int len = (int) strlen (cells[r][c]);
            if (len > width[c])
                width[c] = len;
        }
    for (int r = 0; r < rows; r++) {
        fputs ("  ", out);
        for (int c = 0; c < NCOLS; c++) {
            if (c < 2)
                fprintf (out, "%-*s  ", width[c], cells[r][c]);
            else
                fprintf (out, "%*s%s", width[c], cells[r][c], c + 1 < NCOLS ? "  " : "");
        }
        fputc ('\n', out);
    }
}

void
results_print_summary (const results_t *self, FILE *out)
{
    const config_t *cfg = self->cfg;
    int rows = cfg->nnodes + 1;
    char (*cells)[NCOLS][CELL] = xcalloc (rows, sizeof *cells);
    fill_cells (self, cells);
    print_header (self, out);
    print_cells (cells, rows, out);
    print_loaded (self, out);
    if (cfg->platform.payload_scale != 1) {
        uint64_t moved = 0;
        for (int i = 0; i < cfg->nnodes; i++)
            moved += self->nodes[i].stats.bytes_in;
        fprintf (out, "  (MB in platform terms; at payload scale %g, %.1f MB moved "
                 "physically)\n", cfg->platform.payload_scale, (double) moved / CONFIG_MB);
    }
    print_links (self, out);
    print_failures (self, out);
    print_lost (self, out);
    free (cells);
}
