/*  test_results — what the controller makes of the nodes' STATS and
 *  REPORTs, and the files a run leaves: results.json says how the run
 *  ended and gives makespan in platform time, nodes.csv has a row per
 *  node, tasks.csv names the node that computed each task the root
 *  recorded, row by row as records arrive. Bad counters from a node are
 *  refused with the field's name and change nothing; a bad record is
 *  refused and counted; a failed write of tasks.csv is reported.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "controller/results.h"
#include "overlay/config.h"
#include "overlay/load.h"
#include "overlay/util.h"
#include "tests/helpers.h"

/*  A root with two children, one of which has a child: 4 nodes, 5 tasks. */
static const char *const tree_json =
    "{\"name\": \"small\","
    " \"tasks\": {\"count\": 5, \"input_mb\": 1, \"units\": 2},"
    " \"policy\": \"fcfs\","
    " \"platform\": {\"time_scale\": 10, \"payload_scale\": 0.5},"
    " \"tree\": ["
    "  {\"name\": \"root\", \"compute\": 4},"
    "  {\"name\": \"a\", \"parent\": \"root\", \"compute\": 2, \"link_mbps\": 5},"
    "  {\"name\": \"b\", \"parent\": \"root\", \"compute\": 3, \"link_mbps\": 5},"
    "  {\"name\": \"a1\", \"parent\": \"a\", \"compute\": 1, \"link_mbps\": 2}"
    " ]}";

typedef struct {
    config_t *cfg;
    results_t *results;
    char dir[64];
} fixture_t;

static int
setup (void **state)
{
    fixture_t *f = xcalloc (1, sizeof *f);
    char err[TF_ERRLEN];
    f->cfg = config_load_string (tree_json, "<test>", err, sizeof err);
    if (!f->cfg)
        fail_msg ("config: %s", err);
    f->results = results_new (f->cfg);
    test_temp_dir (f->dir, sizeof f->dir, "test_results");
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    test_remove_dir (f->dir);
    results_destroy (&f->results);
    assert_null (f->results);
    config_destroy (&f->cfg);
    free (f);
    return 0;
}

static json_t *
parse (const char *text)
{
    json_error_t jerr;
    json_t *json = json_loads (text, 0, &jerr);
    if (!json)
        fail_msg ("bad test JSON: %s", jerr.text);
    return json;
}

/*  Feed a STATS (report = 0) or REPORT body's stats object to node, as the
 *  controller does: decoded (overlay/proto_stats.h), then filed. */
static int
feed (fixture_t *f, int report, int node, const char *stats, char *err, size_t errlen)
{
    json_t *json = parse (stats);
    proto_stats_t s;
    int most = node >= 0 && node < f->cfg->nnodes ? f->cfg->nodes[node].nchildren : 0;
    int rc = proto_stats_decode (json, NULL, report, most, &s, err, errlen);
    if (rc == 0)
        rc = report ? results_update_report (f->results, node, &s, err, errlen)
                    : results_update_stats (f->results, node, &s, err, errlen);
    proto_stats_clear (&s);
    json_decref (json);
    return rc;
}

static void
feed_ok (fixture_t *f, int report, int node, const char *stats)
{
    char err[TF_ERRLEN] = "";
    if (feed (f, report, node, stats, err, sizeof err) != 0)
        fail_msg ("refused: %s", err);
}

static void
refused (fixture_t *f, int report, int node, const char *stats, const char *why)
{
    char err[TF_ERRLEN] = "";
    assert_int_equal (feed (f, report, node, stats, err, sizeof err), -1);
    if (!strstr (err, why))
        fail_msg ("error \"%s\" does not mention \"%s\"", err, why);
}

static char *
slurp (const char *dir, const char *name)
{
    char *path = xasprintf ("%s/%s", dir, name);
    char *text = test_read_file (path);
    free (path);
    return text;
}

/*  The summary as the terminal would show it; the caller frees. */
static char *
summary (fixture_t *f)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    results_print_summary (f->results, out);
    fclose (out);
    return text;
}

/*  Record task by node, which must be accepted. */
static void
record_ok (fixture_t *f, uint64_t task, uint64_t node)
{
    char err[TF_ERRLEN] = "";
    if (results_record (f->results, task, node, NULL, err, sizeof err) != 0)
        fail_msg ("record refused: %s", err);
}

/*  The summary contains every string of want (NULL-ended). */
static void
summary_says (fixture_t *f, const char *const *want)
{
    char *text = summary (f);
    for (; *want; want++)
        if (!strstr (text, *want))
            fail_msg ("the summary does not say \"%s\":\n%s", *want, text);
    free (text);
}

/*  A whole successful run: the root records who computed what as the run
 *  goes, every node reports. */
static void
feed_complete_run (fixture_t *f)
{
    char err[TF_ERRLEN] = "";
    if (results_open_tasks (f->results, f->dir, err, sizeof err) != 0)
        fail_msg ("open tasks.csv: %s", err);
    static const uint64_t order[5][2] = {{4, 0}, {1, 1}, {0, 0}, {3, 3}, {2, 2}};
    for (int i = 0; i < 5; i++)
        record_ok (f, order[i][0], order[i][1]);
    if (results_close_tasks (f->results, err, sizeof err) != 0)
        fail_msg ("close tasks.csv: %s", err);
    feed_ok (f, 1, 0,
             "{\"computed\": 2, \"forwarded\": 3, \"completed\": 5, \"bytes_out\": 3145728,"
             " \"compute_seconds\": 1.5, \"held\": 0,"
             " \"compute_measured\": 3.875, \"compute_stderr\": 0.0625,"
             " \"compute_predicted\": 4, \"load_utilization\": 0, \"load_kind\": \"none\","
             " \"children\": [{\"name\": \"a\", \"tasks\": 2, \"bytes\": 2097152,"
             "                 \"requested\": 3},"
             "               {\"name\": \"b\", \"tasks\": 1, \"bytes\": 1048576}]}");
    feed_ok (f, 1, 1, "{\"computed\": 1, \"forwarded\": 1, \"received\": 2,"
                      " \"bytes_in\": 2097152, \"children\": [{\"name\": \"a1\", \"tasks\": 1}]}");
    feed_ok (f, 1, 2, "{\"computed\": 1, \"received\": 1, \"bytes_in\": 1048576}");
    feed_ok (f, 1, 3, "{\"computed\": 1, \"received\": 1, \"bytes_in\": 1048576}");
    for (int i = 0; i < 4; i++)
        results_set_pid (f->results, i, 1000 + i);
    results_set_wall (f->results, 2.0, 1);
    results_set_status (f->results, RESULTS_COMPLETE, NULL);
}

static void
test_stats_missing_counters_are_zero (void **state)
{
    fixture_t *f = *state;
    feed_ok (f, 0, 1, "{\"computed\": 7, \"compute_seconds\": 2, \"future_field\": [1]}");
    const results_stats_t *s = results_node_stats (f->results, 1);
    assert_int_equal (s->computed, 7);
    assert_int_equal (s->forwarded, 0);
    assert_int_equal (s->bytes_in, 0);
    assert_true (s->compute_seconds == 2.0);
    assert_false (results_node_reported (f->results, 1));

    /*  A later STATS replaces the counters, it does not add. */
    feed_ok (f, 0, 1, "{\"computed\": 9}");
    assert_int_equal (results_node_stats (f->results, 1)->computed, 9);
    assert_true (results_node_stats (f->results, 1)->compute_seconds == 0);

    feed_ok (f, 0, 0, "{\"completed\": 3, \"duplicates\": 1}");
    assert_int_equal (results_completed (f->results), 3);
}

static void
test_bad_stats_are_refused_and_change_nothing (void **state)
{
    fixture_t *f = *state;
    feed_ok (f, 0, 2, "{\"computed\": 4}");
    refused (f, 0, 2, "[1, 2]", "object");
    refused (f, 0, 2, "{\"computed\": -1}", "\"computed\"");
    refused (f, 0, 2, "{\"bytes_in\": \"many\"}", "\"bytes_in\"");
    refused (f, 0, 2, "{\"forwarded\": 1.5}", "\"forwarded\"");
    refused (f, 0, 2, "{\"compute_seconds\": -0.5}", "\"compute_seconds\"");
    refused (f, 0, 2, "{\"compute_seconds\": \"x\"}", "\"compute_seconds\"");
    assert_int_equal (results_node_stats (f->results, 2)->computed, 4);

    char err[TF_ERRLEN];
    proto_stats_t ok = {.speed_mean = 1};
    assert_int_equal (results_update_stats (f->results, 4, &ok, err, sizeof err), -1);
    assert_int_equal (results_update_stats (f->results, -1, &ok, err, sizeof err), -1);
}

static void
test_bad_reports_are_refused_and_change_nothing (void **state)
{
    fixture_t *f = *state;
    refused (f, 1, 1, "{\"children\": 3}", "\"children\"");
    refused (f, 1, 1, "{\"children\": [{\"tasks\": 1}]}", "children[0]");
    refused (f, 1, 1, "{\"children\": [{\"name\": \"a1\", \"tasks\": -2}]}", "\"tasks\"");
    refused (f, 1, 1, "{\"children\": [{\"name\": \"a1\"}, {\"name\": \"x\"}]}",
             "at most 1 entries");   /* node a has one child */
    assert_false (results_node_reported (f->results, 0));
    assert_false (results_node_reported (f->results, 1));
    assert_int_equal (results_node_stats (f->results, 0)->computed, 0);
}

/*  A record out of range or already made is refused, counted, and never
 *  written; the file keeps the order records came in. */
static void
test_bad_records_are_refused_and_counted (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "";
    assert_int_equal (results_open_tasks (f->results, f->dir, err, sizeof err), 0);
    record_ok (f, 3, 1);
    assert_int_equal (results_record (f->results, 5, 0, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, "out of range"));
    assert_int_equal (results_record (f->results, 0, 4, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, "out of range"));
    assert_int_equal (results_record (f->results, 3, 2, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, "task 3 is already recorded"));
    record_ok (f, 0, 2);
    assert_int_equal (results_recorded (f->results), 2);
    assert_int_equal (results_close_tasks (f->results, err, sizeof err), 0);
    assert_int_equal (results_write (f->results, f->dir, err, sizeof err), 0);
    char *text = slurp (f->dir, "tasks.csv");
    assert_string_equal (text, "task,node,id,status,exit,attempts,bytes_in,bytes_out,seconds\n3,a,,ok,,,,,\n0,b,,ok,,,,,\n");
    free (text);
    text = slurp (f->dir, "results.json");
    json_t *r = parse (text);
    free (text);
    assert_int_equal (json_integer_value (json_object_get (r, "recorded")), 2);
    assert_int_equal (json_integer_value (json_object_get (r, "records_refused")), 3);
    json_decref (r);
}

/*  A full disk: the failure is kept, named with the file, and later rows
 *  are dropped; results.json is still written. */
static void
test_tasks_write_failure_is_reported (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "";
    char *link = xasprintf ("%s/tasks.csv", f->dir);
    if (symlink ("/dev/full", link) != 0)
        fail_msg ("symlink %s: %s", link, strerror (errno));
    /*  The header is buffered: the failure shows at the first flush. */
    if (results_open_tasks (f->results, f->dir, err, sizeof err) == 0) {
        record_ok (f, 1, 0);
        assert_int_equal (results_check_tasks (f->results, err, sizeof err), 0);
        assert_int_equal (results_flush_tasks (f->results, err, sizeof err), -1);
    }
    char *want = xasprintf ("cannot write %s: %s", link, strerror (ENOSPC));
    assert_string_equal (err, want);
    record_ok (f, 2, 0);   /* still accepted, not written */
    assert_int_equal (results_check_tasks (f->results, err, sizeof err), -1);
    assert_int_equal (results_close_tasks (f->results, err, sizeof err), -1);
    assert_string_equal (err, want);
    assert_int_equal (results_write (f->results, f->dir, err, sizeof err), 0);
    free (slurp (f->dir, "results.json"));
    free (want);
    free (link);
}

static void check_nodes_json (json_t *nodes);
static void check_csv_files (fixture_t *f);

static void
test_complete_run_files (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "";
    feed_complete_run (f);
    results_set_malformed (f->results, 2);
    if (results_write (f->results, f->dir, err, sizeof err) != 0)
        fail_msg ("write: %s", err);

    char *text = slurp (f->dir, "results.json");
    json_t *r = parse (text);
    free (text);
    assert_string_equal (json_string_value (json_object_get (r, "experiment")), "small");
    assert_string_equal (json_string_value (json_object_get (r, "status")), "complete");
    assert_true (json_is_null (json_object_get (r, "error")));
    assert_string_equal (json_string_value (json_object_get (r, "policy")), "fcfs");
    assert_string_equal (json_string_value (json_object_get (r, "mode")), "emulated");
    assert_int_equal (json_integer_value (json_object_get (r, "tasks")), 5);
    assert_int_equal (json_integer_value (json_object_get (r, "completed")), 5);
    assert_int_equal (json_integer_value (json_object_get (r, "malformed")), 2);
    /*  2 wall seconds at time scale 10: 20 platform seconds, 0.25 task/s. */
    assert_float_equal (json_number_value (json_object_get (r, "makespan_s")), 20.0, 1e-9);
    assert_float_equal (json_number_value (json_object_get (r, "wall_s")), 2.0, 1e-9);
    assert_float_equal (json_number_value (json_object_get (r, "throughput")), 0.25, 1e-9);
    /*  The config is the canonical object: it loads back to the same tree. */
    json_t *config = json_object_get (r, "config");
    assert_true (json_is_object (config));
    char *config_text = json_dumps (config, 0);
    config_t *again = config_load_string (config_text, "<results>", err, sizeof err);
    free (config_text);
    assert_non_null (again);
    assert_int_equal (again->nnodes, 4);
    config_destroy (&again);

    check_nodes_json (json_object_get (r, "nodes"));
    json_decref (r);
    check_csv_files (f);
}

/*  results.json's nodes of the complete run: per-node figures, per-child
 *  records, platform MB. */
static void
check_nodes_json (json_t *nodes)
{
    assert_int_equal (json_array_size (nodes), 4);
    json_t *root = json_array_get (nodes, 0), *a = json_array_get (nodes, 1);
    assert_string_equal (json_string_value (json_object_get (root, "name")), "root");
    assert_true (json_is_null (json_object_get (root, "parent")));
    assert_int_equal (json_integer_value (json_object_get (root, "pid")), 1000);
    assert_int_equal (json_integer_value (json_object_get (root, "forwarded")), 3);
    assert_float_equal (json_number_value (json_object_get (root, "compute_seconds")), 1.5,
                        1e-9);
    json_t *kids = json_object_get (root, "children");
    assert_int_equal (json_array_size (kids), 2);
    assert_string_equal (json_string_value (json_object_get (json_array_get (kids, 1),
                                                             "name")), "b");
    assert_int_equal (json_integer_value (json_object_get (json_array_get (kids, 0),
                                                           "requested")), 3);
    assert_int_equal (json_integer_value (json_object_get (json_array_get (kids, 1),
                                                           "requested")), 0);
    assert_string_equal (json_string_value (json_object_get (a, "parent")), "root");
    assert_int_equal (json_integer_value (json_object_get (a, "bytes_in")), 2097152);
    /*  Platform MB: 2 physical MB at payload scale 0.5 stand for 4. */
    assert_float_equal (json_number_value (json_object_get (a, "mb_in")), 4.0, 1e-9);
    assert_float_equal (json_number_value (json_object_get (root, "mb_out")), 6.0, 1e-9);
    /*  The rates: the root's as it reported them; a said none (an older
     *  node), so its measured rate is unknown and, dedicated, it predicts
     *  its configured 2 with no load. */
    assert_true (json_number_value (json_object_get (root, "compute_configured")) == 4);
    assert_true (json_number_value (json_object_get (root, "compute_predicted")) == 4);
    assert_true (json_number_value (json_object_get (root, "compute_measured")) == 3.875);
    assert_true (json_number_value (json_object_get (root, "compute_stderr")) == 0.0625);
    json_t *load = json_object_get (root, "load");
    assert_true (json_is_number (json_object_get (load, "utilization"))
                 && json_number_value (json_object_get (load, "utilization")) == 0);
    assert_string_equal (json_string_value (json_object_get (load, "kind")), "none");
    assert_true (json_number_value (json_object_get (a, "compute_configured")) == 2);
    assert_true (json_number_value (json_object_get (a, "compute_predicted")) == 2);
    assert_true (json_is_null (json_object_get (a, "compute_measured")));
    assert_true (json_is_null (json_object_get (a, "compute_stderr")));
    load = json_object_get (a, "load");
    assert_true (json_number_value (json_object_get (load, "utilization")) == 0);
    assert_string_equal (json_string_value (json_object_get (load, "kind")), "none");
}

/*  nodes.csv and tasks.csv of the complete run, and no temporary left. */
static void
check_csv_files (fixture_t *f)
{
    char *text = slurp (f->dir, "nodes.csv");
    assert_string_equal (text,
                         "name,parent,pid,computed,forwarded,received,requested,bytes_in,"
                         "bytes_out,malformed,slots,requeued,reclaimed,returned,stale,"
                         "stale_dropped,copies,copies_won,cancelled,wasted,cpu_us,"
                         "observe_cpu_us,"
                         "compute_seconds,compute_configured,compute_predicted,"
                         "compute_measured,compute_stderr,load_utilization,load_kind\n"
                         "root,,1000,2,3,0,0,0,3145728,0,0,0,0,0,0,0,0,0,0,0,0,0,1.500000,4,4,"
                         "3.875,0.0625,0,none\n"
                         "a,root,1001,1,1,2,0,2097152,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0.000000,2,2,,,"
                         "0,none\n"
                         "b,root,1002,1,0,1,0,1048576,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0.000000,3,3,,,"
                         "0,none\n"
                         "a1,a,1003,1,0,1,0,1048576,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0.000000,1,1,,,"
                         "0,none\n");
    free (text);
    /*  In the order recorded, not sorted. */
    text = slurp (f->dir, "tasks.csv");
    assert_string_equal (text, "task,node,id,status,exit,attempts,bytes_in,bytes_out,seconds\n4,root,,ok,,,,,\n1,a,,ok,,,,,\n0,root,,ok,,,,,\n3,a1,,ok,,,,,\n2,b,,ok,,,,,\n");
    free (text);

    /*  No temporary file is left behind. */
    char *tmp = xasprintf ("%s/.results.json.tmp", f->dir);
    assert_int_equal (access (tmp, F_OK), -1);
    free (tmp);
}

static void
test_failed_run_still_writes_what_arrived (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "";
    assert_int_equal (results_open_tasks (f->results, f->dir, err, sizeof err), 0);
    record_ok (f, 2, 3);
    assert_int_equal (results_close_tasks (f->results, err, sizeof err), 0);
    feed_ok (f, 0, 0, "{\"computed\": 1, \"completed\": 2}");
    feed_ok (f, 0, 3, "{\"computed\": 1}");
    results_set_wall (f->results, 1.0, 0);
    results_set_status (f->results, RESULTS_FAILED, "node a1: disk on fire");
    /*  Only the first error is the cause. */
    results_set_status (f->results, RESULTS_FAILED, "node root: lost a1");
    assert_string_equal (results_error (f->results), "node a1: disk on fire");
    if (results_write (f->results, f->dir, err, sizeof err) != 0)
        fail_msg ("write: %s", err);

    char *text = slurp (f->dir, "results.json");
    json_t *r = parse (text);
    free (text);
    assert_string_equal (json_string_value (json_object_get (r, "status")), "failed");
    assert_string_equal (json_string_value (json_object_get (r, "error")),
                         "node a1: disk on fire");
    assert_int_equal (json_integer_value (json_object_get (r, "completed")), 2);
    assert_true (json_is_null (json_object_get (r, "makespan_s")));
    assert_true (json_is_null (json_object_get (r, "throughput")));
    json_t *root = json_array_get (json_object_get (r, "nodes"), 0);
    assert_true (json_is_null (json_object_get (root, "pid")));
    assert_false (json_is_true (json_object_get (root, "reported")));
    json_decref (r);

    /*  Tasks never recorded have no row. */
    text = slurp (f->dir, "tasks.csv");
    assert_string_equal (text, "task,node,id,status,exit,attempts,bytes_in,bytes_out,seconds\n2,a1,,ok,,,,,\n");
    free (text);

    results_set_status (f->results, RESULTS_INTERRUPTED, "interrupted");
    assert_string_equal (results_status_str (results_status (f->results)), "interrupted");
}

static void
test_write_into_missing_dir_fails (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "";
    char *dir = xasprintf ("%s/not-there", f->dir);
    assert_int_equal (results_write (f->results, dir, err, sizeof err), -1);
    assert_non_null (strstr (err, "not-there"));
    free (dir);
}

static void
test_summary (void **state)
{
    fixture_t *f = *state;
    feed_complete_run (f);
    char *text = summary (f);
    assert_non_null (strstr (text, "small/fcfs: complete"));
    assert_non_null (strstr (text, "5/5 tasks"));
    assert_non_null (strstr (text, "makespan 20.00 s (platform)"));
    assert_non_null (strstr (text, "wall 2.00 s"));
    assert_non_null (strstr (text, "throughput 0.250 tasks/s"));
    assert_non_null (strstr (text, "share"));
    /*  a1 sits under a, indented; shares add up over computed tasks. */
    assert_non_null (strstr (text, "\n      a1"));
    assert_non_null (strstr (text, "40.0%"));
    assert_non_null (strstr (text, "20.0%"));
    /*  Platform MB at payload scale 0.5: root's 3 physical MB out are 6,
     *  a's 2 in are 4; the note gives the physical total (2+1+1 in). */
    assert_non_null (strstr (text, "6.0"));
    assert_non_null (strstr (text, "4.0"));
    assert_non_null (strstr (text, "at payload scale 0.5, 4.0 MB moved physically"));
    /*  No node has load: no rate lines. */
    assert_null (strstr (text, "configured"));
    free (text);
}

/*  Nodes with background load (a description the test makes up: the
 *  results read only whether there is one): b reported its rates, a1
 *  said nothing. results.json and the summary give b's figures, and
 *  unknowns for a1 (nothing assumed of a loaded node), while a dedicated
 *  node that said nothing is known to predict its configured rate. */
static void
test_rates_of_loaded_nodes (void **state)
{
    fixture_t *f = *state;
    load_t *fake = xcalloc (1, sizeof *fake);
    f->cfg->nodes[2].load = f->cfg->nodes[3].load = fake;
    feed_ok (f, 0, 2, "{\"compute_measured\": 1.5, \"compute_stderr\": 0.125,"
                      " \"compute_predicted\": 1.5, \"load_utilization\": 0.5,"
                      " \"load_kind\": \"jobs\"}");
    const char *const want[] = {
        "  b: compute 3.0 configured, 1.5 predicted, 1.5 +- 0.1 measured (load jobs, U 0.50)\n",
        "  a1: compute 1.0 configured, - predicted, - measured (load -, U -)\n", NULL};
    summary_says (f, want);
    char *text = summary (f);
    assert_null (strstr (text, "root: compute"));
    free (text);
    json_t *r = results_to_json (f->results);
    json_t *nodes = json_object_get (r, "nodes");
    json_t *b = json_array_get (nodes, 2), *a1 = json_array_get (nodes, 3);
    assert_true (json_number_value (json_object_get (b, "compute_configured")) == 3);
    assert_true (json_number_value (json_object_get (b, "compute_measured")) == 1.5);
    assert_true (json_number_value (json_object_get (b, "compute_stderr")) == 0.125);
    json_t *load = json_object_get (b, "load");
    assert_true (json_number_value (json_object_get (load, "utilization")) == 0.5);
    assert_string_equal (json_string_value (json_object_get (load, "kind")), "jobs");
    assert_true (json_is_null (json_object_get (a1, "compute_predicted")));
    load = json_object_get (a1, "load");
    assert_true (json_is_null (json_object_get (load, "utilization"))
                 && json_is_null (json_object_get (load, "kind")));
    assert_true (json_number_value (json_object_get (json_array_get (nodes, 1),
                                                     "compute_predicted")) == 2);
    json_decref (r);
    f->cfg->nodes[2].load = f->cfg->nodes[3].load = NULL;
    free (fake);
}

/*  Lag reported by the nodes becomes fidelity: per node 1 - max(loop,
 *  engine, link lag) / wall, the run's is its worst node's, and below
 *  RESULTS_FIDELITY_MIN the efficiency is flagged in results.json and in
 *  the summary. */
static void
test_lag_makes_fidelity_and_flags_efficiency (void **state)
{
    fixture_t *f = *state;
    feed_complete_run (f);   /* wall 2 s, no lag reported: fidelity 1 */
    json_t *r = results_to_json (f->results);
    assert_true (json_is_true (json_object_get (r, "efficiency_reliable")));
    assert_true (json_is_null (json_object_get (json_object_get (r, "fidelity"), "node")));
    json_decref (r);

    /*  b's links lagged 0.1 s of 2 (0.95), a1's loop 0.4 s (0.80). */
    feed_ok (f, 0, 2, "{\"computed\": 1, \"received\": 1, \"bytes_in\": 1048576,"
                      " \"lag\": {\"loop_s\": 0.05, \"engine_s\": 0.02, \"link_s\": 0.1,"
                      " \"max_s\": 0.01}}");
    assert_true (fabs (results_node_fidelity (f->results, 2) - 0.95) < 1e-9);
    assert_true (results_fidelity (f->results, NULL) >= RESULTS_FIDELITY_MIN);
    feed_ok (f, 0, 3, "{\"computed\": 1, \"received\": 1, \"bytes_in\": 1048576,"
                      " \"lag\": {\"loop_s\": 0.4, \"engine_s\": 0.3, \"max_s\": 0.2}}");
    int worst;
    assert_true (fabs (results_fidelity (f->results, &worst) - 0.80) < 1e-9);
    assert_int_equal (worst, 3);
    r = results_to_json (f->results);
    assert_true (json_is_false (json_object_get (r, "efficiency_reliable")));
    json_t *fid = json_object_get (r, "fidelity");
    assert_string_equal (json_string_value (json_object_get (fid, "node")), "a1");
    assert_true (json_is_false (json_object_get (fid, "reliable")));
    json_t *a1 = json_array_get (json_object_get (r, "nodes"), 3);
    assert_true (fabs (json_real_value (json_object_get (a1, "fidelity")) - 0.8) < 1e-9);
    assert_true (json_real_value (json_object_get (json_object_get (a1, "lag"), "loop_s"))
                 == 0.4);
    json_decref (r);

    summary_says (f, (const char *const[]){"(UNRELIABLE)", "fidelity 0.800 (worst: a1)",
                                           "lower time_scale", NULL});
    /*  The same lag in a real run: no emulated clock to keep up with, so
     *  the summary says nothing of fidelity (results.json keeps it). */
    f->cfg->platform.mode = PLATFORM_REAL;
    char *text = summary (f);
    if (strstr (text, "fidelity") || strstr (text, "UNRELIABLE"))
        fail_msg ("a real run's summary speaks of fidelity:\n%s", text);
    free (text);
    f->cfg->platform.mode = PLATFORM_EMULATED;

    /*  A lag object that is not one, or a negative lag, is refused. */
    refused (f, 0, 1, "{\"lag\": 3}", "lag");
    refused (f, 0, 1, "{\"lag\": {\"loop_s\": -1}}", "loop_s");
}

/*  A run of 100 tasks, 10 left out at each end: a slow start (one task a
 *  second for 10 s), a steady middle (ten a second) and a slow tail (one
 *  a second). The whole run averages 100 / 28 tasks/s; the window sees
 *  only the middle, 80 tasks in 8 s; the tail (the last 5%) takes 5 s. */
static void
test_steady_window_leaves_out_start_and_tail (void **state)
{
    (void) state;
    results_window_t w = results_window_make (100, 10);
    uint64_t tasks;
    double seconds;
    double t = 0;
    for (uint64_t r = 1; r <= 100; r++) {
        t += r <= 10 || r > 90 ? 1.0 : 0.1;
        results_window_note (&w, r, t);
        if (r < 90)
            assert_int_equal (results_window_get (&w, &tasks, &seconds), -1);
    }
    assert_int_equal (results_window_get (&w, &tasks, &seconds), 0);
    assert_int_equal (tasks, 80);
    assert_float_equal (seconds, 8.0, 1e-9);
    assert_float_equal ((double) tasks / seconds, 10.0, 1e-9);
    /*  The tail, the last 5 tasks: from the 95th record (t = 23) to the
     *  last (t = 28). */
    assert_int_equal (w.tail_n, 5);
    assert_int_equal (results_window_tail (&w, &seconds), 0);
    assert_float_equal (seconds, 5.0, 1e-9);

    /*  Batches: an end is the first batch that reaches it, and the tasks
     *  are those recorded after the window opened. */
    w = results_window_make (100, 10);
    results_window_note (&w, 8, 1.0);
    results_window_note (&w, 14, 2.0);
    results_window_note (&w, 89, 4.0);
    assert_int_equal (results_window_get (&w, &tasks, &seconds), -1);
    results_window_note (&w, 95, 6.0);
    assert_int_equal (results_window_tail (&w, &seconds), -1);   /* not over */
    results_window_note (&w, 100, 9.0);
    assert_int_equal (results_window_get (&w, &tasks, &seconds), 0);
    assert_int_equal (tasks, 81);
    assert_float_equal (seconds, 4.0, 1e-9);
    assert_int_equal (results_window_tail (&w, &seconds), 0);
    assert_float_equal (seconds, 3.0, 1e-9);

    /*  Fewer than 3k tasks: no steady state (a window of fewer than k);
     *  3k: one of k tasks. One batch reaching both ends: none either. */
    w = results_window_make (29, 10);
    for (uint64_t r = 1; r <= 29; r++)
        results_window_note (&w, r, (double) r);
    assert_int_equal (results_window_get (&w, &tasks, &seconds), -1);
    w = results_window_make (30, 10);
    for (uint64_t r = 1; r <= 30; r++)
        results_window_note (&w, r, (double) r);
    assert_int_equal (results_window_get (&w, &tasks, &seconds), 0);
    assert_int_equal (tasks, 10);
    w = results_window_make (30, 10);
    results_window_note (&w, 30, 1.0);
    assert_int_equal (results_window_get (&w, &tasks, &seconds), -1);
}

/*  k is the tree's in-flight capacity: the small tree's three non-root
 *  nodes hold buffer (3) + 1 each, the root runs one: 13. Its 5 tasks
 *  have no steady state, so results.json says null. */
static void
test_steady_window_k_and_results (void **state)
{
    fixture_t *f = *state;
    assert_int_equal (results_window_k (f->cfg), 13);
    feed_complete_run (f);
    json_t *r = results_to_json (f->results);
    assert_true (json_is_null (json_object_get (r, "steady")));
    json_decref (r);

    /*  A star of one child (k = 1 + 4 = 5) and 40 tasks: 5 slow at each
     *  end, 30 at 10 per wall second in between, time scale 10. */
    char err[TF_ERRLEN];
    config_t *cfg = config_load_string (
        "{\"name\": \"star\", \"tasks\": {\"count\": 40, \"input_mb\": 1, \"units\": 1},"
        " \"policy\": \"fcfs\", \"platform\": {\"time_scale\": 10},"
        " \"tree\": [{\"name\": \"r\", \"compute\": 1},"
        "  {\"name\": \"c\", \"parent\": \"r\", \"compute\": 1, \"link_mbps\": 1}]}",
        "<test>", err, sizeof err);
    assert_non_null (cfg);
    results_t *res = results_new (cfg);
    double t = 0;
    for (uint64_t task = 0; task < 40; task++) {
        t += task < 5 || task >= 35 ? 1.0 : 0.1;
        assert_int_equal (results_record (res, task, task % 2, NULL, err, sizeof err), 0);
        results_note_recorded_at (res, t);
    }
    results_set_wall (res, t, 1);
    results_set_status (res, RESULTS_COMPLETE, NULL);
    r = results_to_json (res);
    json_t *st = json_object_get (r, "steady");
    assert_true (json_is_object (st));
    assert_int_equal (json_integer_value (json_object_get (st, "k")), 5);
    assert_int_equal (json_integer_value (json_object_get (st, "tasks")), 30);
    /*  Platform time: from 5 wall s to 8, times 10. */
    assert_float_equal (json_number_value (json_object_get (st, "from_s")), 50.0, 1e-9);
    assert_float_equal (json_number_value (json_object_get (st, "to_s")), 80.0, 1e-9);
    assert_float_equal (json_number_value (json_object_get (st, "throughput")), 1.0, 1e-9);
    double bound = json_number_value (json_object_get (json_object_get (r, "bound"),
                                                       "tasks_per_s"));
    assert_float_equal (json_number_value (json_object_get (st, "efficiency")), 1.0 / bound,
                        1e-9);
    /*  The whole run's is lower: 40 tasks in 130 platform seconds. */
    assert_true (json_number_value (json_object_get (r, "throughput")) < 0.31);
    json_decref (r);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    results_print_summary (res, out);
    fclose (out);
    char want[64];
    snprintf (want, sizeof want, "steady %.1f%%", 100.0 / bound);
    if (!strstr (text, want))
        fail_msg ("the summary does not say \"%s\":\n%s", want, text);
    free (text);
    results_destroy (&res);
    config_destroy (&cfg);
}

/*  Nodes lost during a run: listed in results.json with why and when,
 *  marked in their entries, named in the summary, their lag no longer
 *  the run's fidelity; a second loss of the same node changes nothing. */
static void
test_lost_nodes (void **state)
{
    fixture_t *f = *state;
    feed_complete_run (f);
    /*  a1 froze for 1.6 of 2 s before it was lost. */
    feed_ok (f, 0, 3, "{\"computed\": 1, \"lag\": {\"loop_s\": 1.6}}");
    assert_true (results_fidelity (f->results, NULL) < RESULTS_FIDELITY_MIN);
    results_set_lost (f->results, 3, "node a1 (pid 1003) killed by signal 9 (Killed)", 1.25);
    results_set_lost (f->results, 3, "again", 1.5);
    assert_int_equal (results_lost_count (f->results), 1);
    assert_true (results_node_lost (f->results, 3));
    assert_false (results_node_lost (f->results, 1));
    assert_true (results_fidelity (f->results, NULL) >= RESULTS_FIDELITY_MIN);

    json_t *r = results_to_json (f->results);
    json_t *lost = json_object_get (r, "lost");
    assert_int_equal (json_array_size (lost), 1);
    json_t *one = json_array_get (lost, 0);
    assert_string_equal (json_string_value (json_object_get (one, "name")), "a1");
    assert_non_null (strstr (json_string_value (json_object_get (one, "why")), "signal 9"));
    assert_float_equal (json_real_value (json_object_get (one, "at_s")), 1.25, 1e-12);
    json_t *nodes = json_object_get (r, "nodes");
    assert_true (json_is_true (json_object_get (json_array_get (nodes, 3), "lost")));
    assert_true (json_is_false (json_object_get (json_array_get (nodes, 1), "lost")));
    json_decref (r);
    summary_says (f, (const char *const[]){"a1 (lost)", "lost: 1 node: a1 (node a1 (pid 1003) "
                                           "killed by signal 9 (Killed), at 1.2 s)",
                                           "the bound is the whole tree's", NULL});
}

/*  A lost node's late FAIL: its reason replaces the one it was lost
 *  for, the time stays; a node not lost is not made lost by it. */
static void
test_lost_explained (void **state)
{
    fixture_t *f = *state;
    feed_complete_run (f);
    results_explain_lost (f->results, 1, "it failed: not lost");
    assert_false (results_node_lost (f->results, 1));
    results_set_lost (f->results, 3, "node a1 (pid 1003) exited with status 1", 1.25);
    results_explain_lost (f->results, 3, "it failed: cannot write spool/1: File too large");
    assert_int_equal (results_lost_count (f->results), 1);
    json_t *r = results_to_json (f->results);
    json_t *one = json_array_get (json_object_get (r, "lost"), 0);
    assert_string_equal (json_string_value (json_object_get (one, "why")),
                         "it failed: cannot write spool/1: File too large");
    assert_float_equal (json_real_value (json_object_get (one, "at_s")), 1.25, 1e-12);
    assert_int_equal (json_array_size (json_object_get (r, "lost")), 1);
    json_decref (r);
}

static void
test_make_dir (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "";
    struct stat st;
    char *deep = xasprintf ("%s/x/y//z/", f->dir);
    if (results_make_dir (deep, err, sizeof err) != 0)
        fail_msg ("mkdir -p: %s", err);
    assert_int_equal (stat (deep, &st), 0);
    assert_true (S_ISDIR (st.st_mode));
    /*  Again: an existing directory is fine. */
    assert_int_equal (results_make_dir (deep, err, sizeof err), 0);
    free (deep);

    char *file = xasprintf ("%s/file", f->dir);
    FILE *fp = fopen (file, "w");
    fclose (fp);
    assert_int_equal (results_make_dir (file, err, sizeof err), -1);
    assert_non_null (strstr (err, "not a directory"));
    char *under = xasprintf ("%s/sub/dir", file);
    assert_int_equal (results_make_dir (under, err, sizeof err), -1);
    assert_non_null (strstr (err, "not a directory"));
    assert_int_equal (results_make_dir ("", err, sizeof err), -1);
    free (under);
    free (file);
}

/*  A directory a file can be created in passes and keeps nothing of the
 *  check; one that takes no file (root writes through permission bits,
 *  but not into /proc) or is missing fails, naming it. */
static void
test_check_writable (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN] = "";
    if (results_check_writable (f->dir, err, sizeof err) != 0)
        fail_msg ("writable: %s", err);
    DIR *d = opendir (f->dir);
    int entries = 0;
    for (struct dirent *e; (e = readdir (d));)
        entries += strcmp (e->d_name, ".") && strcmp (e->d_name, "..");
    closedir (d);
    assert_int_equal (entries, 0);
    char *ro = xasprintf ("%s/read-only", f->dir);
    assert_int_equal (mkdir (ro, 0555), 0);
    const char *bad = geteuid () == 0 ? "/proc" : ro;
    assert_int_equal (results_check_writable (bad, err, sizeof err), -1);
    assert_non_null (strstr (err, bad));
    char *missing = xasprintf ("%s/missing", f->dir);
    assert_int_equal (results_check_writable (missing, err, sizeof err), -1);
    assert_non_null (strstr (err, missing));
    free (missing);
    free (ro);
}

static void
test_default_dir (void **state)
{
    (void) state;
    char *dir = results_default_dir ("fork7", 0);
    /*  results/fork7-YYYYmmdd-HHMMSS, whatever the local time zone. */
    assert_int_equal (strncmp (dir, "results/fork7-19", 16), 0);
    assert_int_equal (strlen (dir), strlen ("results/fork7-19700101-000000"));
    assert_int_equal (dir[22], '-');
    free (dir);
}


/*  The bound: the controller computes it offline for the policy's port
 *  model and compares the tree's own. By hand for the fixture (Z = 1 MB,
 *  w = 2, no interference, no send limit), in tasks/s: C = 2, 1, 1.5, 0.5
 *  for root, a, b, a1; B_r = 5, 5, 2 for a, b, a1. That(a1) = min(2, 0.5)
 *  = 0.5; That(a) = 1 + 0.5 = 1.5 (port 0.25 busy); That(b) = 1.5; the
 *  root sends 1.5 + 1.5 on a port busy 0.6 of the time: 2 + 3 = 5, in
 *  every model. */
static void
test_bound_against_the_tree_s_own (void **state)
{
    fixture_t *f = *state;
    feed_complete_run (f);
    feed_ok (f, 0, 0, "{\"completed\": 5, \"bound\": {\"multi\": 5, \"single\": 5,"
                      " \"bwc\": 5}}");
    json_t *r = results_to_json (f->results);
    json_t *b = json_object_get (r, "bound");
    assert_string_equal (json_string_value (json_object_get (b, "model")), "single");
    assert_float_equal (json_number_value (json_object_get (b, "tasks_per_s")), 5.0, 1e-12);
    assert_float_equal (json_number_value (json_object_get (json_object_get (b, "all"),
                                                            "bwc")), 5.0, 1e-12);
    assert_true (json_is_true (json_object_get (b, "agree")));
    /*  5 tasks in 20 platform seconds against 5 tasks/s. */
    assert_float_equal (json_number_value (json_object_get (r, "efficiency")), 0.05, 1e-12);
    json_decref (r);

    feed_ok (f, 0, 0, "{\"completed\": 5, \"bound\": {\"multi\": 5, \"single\": 4,"
                      " \"bwc\": 5}}");
    r = results_to_json (f->results);
    assert_true (json_is_false (json_object_get (json_object_get (r, "bound"), "agree")));
    json_decref (r);
    summary_says (f, (const char *const[]){"bound 5.000 tasks/s (single-port",
                                           "efficiency 5.0%", "DIFFERS", NULL});

    refused (f, 0, 0, "{\"bound\": [5]}", "\"bound\" must be an object");
    refused (f, 0, 0, "{\"bound\": {\"multi\": 5, \"single\": 5}}", "\"bwc\" missing");
    refused (f, 0, 0, "{\"bound\": {\"multi\": -5, \"single\": 5, \"bwc\": 5}}",
             "\"multi\"");
}

/*  A copy of the fixture's tree with the root under a job stream of
 *  utilization 0.5 (predicted: half its rate; the bound 4 tasks/s, not
 *  5), adapting or not: its results. */
static results_t *
loaded_results (fixture_t *f, int adapt, config_t **cfg_p)
{
    char err[TF_ERRLEN], path[128], text[2048];
    snprintf (text, sizeof text, "%s", tree_json);
    if (adapt) {
        char *at = strstr (text, "\"time_scale\"");
        assert_non_null (at);
        static const char adapt_key[] = "\"adapt\": true, ";
        size_t n = sizeof adapt_key - 1;
        memmove (at + n, at, strlen (at) + 1);
        memcpy (at, adapt_key, n);
    }
    config_t *cfg = config_load_string (text, "<test>", err, sizeof err);
    if (!cfg)
        fail_msg ("config: %s", err);
    assert_int_equal (cfg->platform.adapt, adapt);
    snprintf (path, sizeof path, "%s/load.json", f->dir);
    test_write_file (path, "{\"root\": {\"jobs\": {\"utilization\": 0.5, \"demand\": "
                           "{\"dist\": \"exp\", \"mean_s\": 0.2}}}}");
    if (config_apply_load_file (cfg, path, err, sizeof err) != 0)
        fail_msg ("load: %s", err);
    *cfg_p = cfg;
    return results_new (cfg);
}

/*  The root's STATS body: the tree's first bound 5 in every model, and
 *  live_bound (a JSON fragment, or ""). */
static void
feed_bounds (results_t *r, const char *live)
{
    char text[256], err[TF_ERRLEN] = "";
    snprintf (text, sizeof text, "{\"completed\": 5, \"bound\": {\"multi\": 5, "
              "\"single\": 5, \"bwc\": 5}%s}", live);
    json_t *json = parse (text);
    proto_stats_t s;
    if (proto_stats_decode (json, NULL, 0, 0, &s, err, sizeof err) != 0
        || results_update_stats (r, 0, &s, err, sizeof err) != 0)
        fail_msg ("refused: %s", err);
    proto_stats_clear (&s);
    json_decref (json);
}

/*  An adapting run's tree starts from the configured, dedicated rates:
 *  its first bound is checked against the dedicated platform's offline
 *  bound, while the run is judged against the loaded one; results.json
 *  gives the final live bound. A run that does not adapt is checked
 *  against the loaded bound and has no live one. */
static void
test_an_adapting_run_s_live_bound (void **state)
{
    fixture_t *f = *state;
    config_t *cfg;
    results_t *r = loaded_results (f, 1, &cfg);
    feed_bounds (r, ", \"live_bound\": {\"multi\": 3.5, \"single\": 3.25, \"bwc\": 3}");
    json_t *j = results_to_json (r);
    json_t *b = json_object_get (j, "bound");
    assert_float_equal (json_number_value (json_object_get (b, "tasks_per_s")), 4.0, 1e-12);
    assert_true (json_is_true (json_object_get (b, "agree")));
    assert_float_equal (json_number_value (json_object_get (b, "live")), 3.25, 1e-12);
    assert_float_equal (results_live_bound (r), 3.25, 1e-12);   /* the progress line's */
    json_decref (j);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    results_print_summary (r, out);
    fclose (out);
    if (!strstr (text, "live bound 3.250 tasks/s") || strstr (text, "DIFFERS"))
        fail_msg ("the summary:\n%s", text);
    free (text);
    results_destroy (&r);
    config_destroy (&cfg);

    r = loaded_results (f, 0, &cfg);
    feed_bounds (r, "");
    j = results_to_json (r);
    b = json_object_get (j, "bound");
    assert_true (json_is_false (json_object_get (b, "agree")));
    assert_null (json_object_get (b, "live"));
    assert_true (isnan (results_live_bound (r)));
    json_decref (j);
    results_destroy (&r);
    config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_stats_missing_counters_are_zero, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_bad_stats_are_refused_and_change_nothing,
                                         setup, teardown),
        cmocka_unit_test_setup_teardown (test_bad_reports_are_refused_and_change_nothing,
                                         setup, teardown),
        cmocka_unit_test_setup_teardown (test_bad_records_are_refused_and_counted, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_tasks_write_failure_is_reported, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_complete_run_files, setup, teardown),
        cmocka_unit_test_setup_teardown (test_failed_run_still_writes_what_arrived, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_write_into_missing_dir_fails, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_summary, setup, teardown),
        cmocka_unit_test_setup_teardown (test_rates_of_loaded_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown (test_bound_against_the_tree_s_own, setup, teardown),
        cmocka_unit_test_setup_teardown (test_an_adapting_run_s_live_bound, setup, teardown),
        cmocka_unit_test_setup_teardown (test_lag_makes_fidelity_and_flags_efficiency, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_lost_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown (test_lost_explained, setup, teardown),
        cmocka_unit_test_setup_teardown (test_make_dir, setup, teardown),
        cmocka_unit_test_setup_teardown (test_check_writable, setup, teardown),
        cmocka_unit_test (test_default_dir),
        cmocka_unit_test (test_steady_window_leaves_out_start_and_tail),
        cmocka_unit_test_setup_teardown (test_steady_window_k_and_results, setup, teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
