/*  test_load — background load descriptions (overlay/load.h): each kind
 *  read with its defaults, the round trip through load_to_json and
 *  through the config, every refusal with the message a user sees (node,
 *  key; file and line for a trace), the predictions, a --load file on a
 *  config, the loaded bound (offline and in the tree), and the /proc/stat
 *  arithmetic of `treefarm load record`.
 *
 *  Tolerance 1e-12: every expected factor below is a ratio of small
 *  numbers a handful of roundings away.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/loadrec.h"
#include "node/subtree.h"
#include "overlay/bound.h"
#include "overlay/config.h"
#include "overlay/load.h"
#include "overlay/util.h"
#include "tests/helpers.h"

#define TOL 1e-12

static void
assert_near (double got, double want)
{
    if (!(fabs (got - want) <= TOL))
        fail_msg ("got %.17g, want %.17g", got, want);
}

/*  A two-node experiment whose node "B" has the load load_json. The
 *  config's origin is dir/t.json (dir NULL: "t.json"). */
static config_t *
load_config (const char *dir, const char *load_json, char *err)
{
    char *text = xasprintf (
        "{\"tasks\": {\"count\": 10, \"input_mb\": 1, \"units\": 2},\n"
        " \"tree\": [{\"name\": \"A\", \"compute\": 10},\n"
        "  {\"name\": \"B\", \"parent\": \"A\", \"compute\": 8, \"link_mbps\": 10,\n"
        "   \"ir_recv\": 0.05, \"load\": %s}]}", load_json);
    char *origin = dir ? xasprintf ("%s/t.json", dir) : xstrdup ("t.json");
    err[0] = '\0';
    config_t *cfg = config_load_string (text, origin, err, TF_ERRLEN);
    free (origin);
    free (text);
    return cfg;
}

/*  Node B's load of a config that must load. */
static config_t *
must_load (const char *dir, const char *load_json, const load_t **load)
{
    char err[TF_ERRLEN];
    config_t *cfg = load_config (dir, load_json, err);
    if (!cfg)
        fail_msg ("%s", err);
    *load = cfg->nodes[1].load;
    assert_non_null (*load);
    return cfg;
}

/*  The load must be refused with a message containing want. */
static void
assert_refused (const char *dir, const char *load_json, const char *want)
{
    char err[TF_ERRLEN];
    config_t *cfg = load_config (dir, load_json, err);
    if (cfg)
        fail_msg ("accepted: %s", load_json);
    if (!strstr (err, want))
        fail_msg ("%s\n  message: %s\n  wanted:  %s", load_json, err, want);
}

/*  load_to_json of a and b are equal. */
static void
assert_loads_equal (const load_t *a, const load_t *b)
{
    json_t *x = load_to_json (a), *y = load_to_json (b);
    if (!json_equal (x, y)) {
        char *sx = json_dumps (x, JSON_SORT_KEYS), *sy = json_dumps (y, JSON_SORT_KEYS);
        fail_msg ("loads differ:\n  %s\n  %s", sx, sy);
    }
    json_decref (x);
    json_decref (y);
}

/*  Parse json (an object) as a load, in config style; NULL: see err. */
static load_t *
parse_json (json_t *json, const char *base_dir, char *err)
{
    jsonw_doc_t doc = {.style = JSONW_CONFIG, .origin = "x.json", .err = err,
                       .errlen = TF_ERRLEN};
    jsonw_t w;
    jsonw_init (&w, &doc, json);
    return load_parse (&w, base_dir);
}

/* ------------------------------------------------------------------------
 *  Each kind, its defaults, the round trips.
 */

static void
test_jobs_defaults_and_classes (void **state)
{
    (void) state;
    const load_t *l;
    config_t *cfg = must_load (NULL, "{\"jobs\": {\"utilization\": 0.5, \"demand\": "
                               "{\"dist\": \"exp\", \"mean_s\": 0.2}}}", &l);
    assert_int_equal (l->nstreams, 1);
    assert_near (l->streams[0].utilization, 0.5);
    assert_int_equal (l->streams[0].demand_kind, DIST_EXP);
    assert_near (l->streams[0].demand_mean_s, 0.2);
    assert_near (l->streams[0].demand_cv, 1);
    assert_int_equal (l->streams[0].arrival_kind, DIST_EXP);
    assert_near (l->streams[0].arrival_cv, 1);
    assert_true (l->seed == 1);
    assert_string_equal (load_kind_str (l), "jobs");
    config_destroy (&cfg);

    cfg = must_load (NULL, "{\"jobs\": {\"utilization\": 0.25, \"demand\": {\"dist\": "
                     "\"h2\", \"mean_s\": 1, \"cv\": 3}, \"arrivals\": {\"dist\": "
                     "\"erlang\", \"cv\": 0.5}, \"classes\": [{\"utilization\": 0.25, "
                     "\"demand\": {\"dist\": \"pareto\", \"mean_s\": 2, \"cv\": 2}}, "
                     "{\"utilization\": 0.2, \"demand\": {\"dist\": \"gamma\", "
                     "\"mean_s\": 0.5, \"cv\": 0.3}}]}, \"seed\": 0}", &l);
    assert_int_equal (l->nstreams, 3);
    assert_int_equal (l->streams[0].demand_kind, DIST_H2);
    assert_near (l->streams[0].demand_cv, 3);
    assert_int_equal (l->streams[0].arrival_kind, DIST_ERLANG);
    assert_near (l->streams[0].arrival_cv, 0.5);
    assert_int_equal (l->streams[1].demand_kind, DIST_PARETO);
    assert_int_equal (l->streams[2].demand_kind, DIST_GAMMA);
    assert_near (load_utilization (l), 0.7);
    assert_true (l->seed == 0);
    config_destroy (&cfg);

    /*  Classes alone: no stream at the top. */
    cfg = must_load (NULL, "{\"jobs\": {\"classes\": [{\"utilization\": 0.1, \"demand\": "
                     "{\"dist\": \"exp\", \"mean_s\": 1}}]}}", &l);
    assert_int_equal (l->nstreams, 1);
    assert_near (l->streams[0].utilization, 0.1);
    config_destroy (&cfg);
}

static void
test_contenders_steps_defaults (void **state)
{
    (void) state;
    const load_t *l;
    config_t *cfg = must_load (NULL, "{\"contenders\": [{\"compute\": 0.5}, {\"comm\": "
                               "0.25, \"msg_bytes\": 800, \"period_s\": 2}], \"steps\": "
                               "[{\"at_s\": 0, \"load\": 1}, {\"at_s\": 10, \"load\": 2}],"
                               " \"seed\": 11}", &l);
    assert_int_equal (l->ncontenders, 2);
    assert_near (l->contenders[0].compute, 0.5);
    assert_near (l->contenders[0].comm, 0);
    assert_int_equal (l->contenders[0].msg_bytes, 0);
    assert_near (l->contenders[0].period_s, 1);
    assert_near (l->contenders[1].comm, 0.25);
    assert_int_equal (l->contenders[1].msg_bytes, 800);
    assert_near (l->contenders[1].period_s, 2);
    assert_null (l->delay_comm);
    assert_int_equal (l->nsteps, 2);
    assert_near (l->steps[1].at_s, 10);
    assert_near (l->steps[1].load, 2);
    assert_true (l->seed == 11);
    assert_string_equal (load_kind_str (l), "contenders+steps");
    assert_string_equal (load_kind_str (NULL), "none");
    config_destroy (&cfg);
}

static void
test_trace_file_and_inline_rows (void **state)
{
    (void) state;
    char dir[256], path[300];
    test_temp_dir (dir, sizeof dir, "test_load");
    snprintf (path, sizeof path, "%s/lab3.csv", dir);
    test_write_file (path, "# recorded\ntime_s,load\n0,1\n\n 2.5 , 3 \r\n# more\n4,1.5\n");
    const load_t *l;
    config_t *cfg = must_load (dir, "{\"trace\": \"lab3.csv\"}", &l);
    assert_int_equal (l->ntrace, 3);
    assert_string_equal (l->trace_path, "lab3.csv");
    assert_near (l->trace[1].at_s, 2.5);
    assert_near (l->trace[1].load, 3);
    assert_string_equal (load_kind_str (l), "trace");

    /*  What the controller ships carries the rows: the node reads no file. */
    char *text = config_to_json (cfg);
    unlink (path);
    char err[TF_ERRLEN];
    config_t *back = config_load_string (text, "<controller>", err, sizeof err);
    if (!back)
        fail_msg ("%s", err);
    assert_loads_equal (l, back->nodes[1].load);
    assert_int_equal (back->nodes[1].load->ntrace, 3);
    free (text);
    config_destroy (&back);
    config_destroy (&cfg);
    test_remove_dir (dir);
}

/*  Every kind at once, then through load_to_json and the
 *  config's canonical text: the same description each time. */
static void
test_round_trips (void **state)
{
    (void) state;
    char dir[256], path[300], err[TF_ERRLEN];
    test_temp_dir (dir, sizeof dir, "test_load");
    snprintf (path, sizeof path, "%s/t.csv", dir);
    test_write_file (path, "0.1,1.1\n0.30000000000000004,2.7\n");
    const load_t *l;
    config_t *cfg = must_load (dir, "{\"jobs\": {\"utilization\": 0.3, \"demand\": "
                               "{\"dist\": \"erlang\", \"mean_s\": 0.2, \"cv\": 0.5}, "
                               "\"classes\": [{\"utilization\": 0.1, \"demand\": {\"dist\": "
                               "\"h2\", \"mean_s\": 0.7, \"cv\": 3}, \"arrivals\": {\"dist\":"
                               " \"gamma\", \"cv\": 0.3}}]}, \"contenders\": [{\"compute\": "
                               "0.24, \"comm\": 0.76, \"msg_bytes\": 800}], \"delay_comm\": "
                               "[0.4], \"steps\": [{\"at_s\": 1, \"load\": 1.5}], \"trace\":"
                               " \"t.csv\", \"seed\": 7}", &l);
    assert_string_equal (load_kind_str (l), "jobs+contenders+steps+trace");
    json_t *json = load_to_json (l);
    load_t *again = parse_json (json, NULL, err);
    if (!again)
        fail_msg ("%s", err);
    assert_loads_equal (l, again);
    char *text = config_to_json (cfg);
    config_t *back = config_load_string (text, "<controller>", err, sizeof err);
    if (!back)
        fail_msg ("%s", err);
    assert_loads_equal (l, back->nodes[1].load);
    assert_true (back->nodes[1].load->trace[1].at_s == 0.30000000000000004);
    assert_null (back->nodes[0].load);
    free (text);
    config_destroy (&back);
    load_destroy (&again);
    assert_null (again);
    load_destroy (&again);   /* safe on NULL */
    json_decref (json);
    config_destroy (&cfg);
    test_remove_dir (dir);
}

/*  The most streams a description holds (a stream and LOAD_MAX_CLASSES
 *  classes) come back from the canonical text in their order. */
static void
test_round_trip_most_streams (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    json_t *jobs = json_pack ("{s:f, s:{s:s, s:f}}", "utilization", 0.01, "demand",
                              "dist", "exp", "mean_s", 1.0);
    json_t *classes = json_array ();
    for (int k = 0; k < LOAD_MAX_CLASSES; k++)
        json_array_append_new (classes, json_pack ("{s:f, s:{s:s, s:f}}", "utilization",
                                                   0.05, "demand", "dist", "exp",
                                                   "mean_s", 1.0 + k));
    json_object_set_new (jobs, "classes", classes);
    json_t *json = json_pack ("{s:o}", "jobs", jobs);
    load_t *l = parse_json (json, NULL, err);
    if (!l)
        fail_msg ("%s", err);
    assert_int_equal (l->nstreams, LOAD_MAX_CLASSES + 1);
    json_t *out = load_to_json (l);
    load_t *again = parse_json (out, NULL, err);
    if (!again)
        fail_msg ("%s", err);
    assert_loads_equal (l, again);
    assert_near (again->streams[LOAD_MAX_CLASSES].demand_mean_s, LOAD_MAX_CLASSES);
    load_destroy (&again);
    load_destroy (&l);
    json_decref (out);
    json_decref (json);
}

/* ------------------------------------------------------------------------
 *  Refusals.
 */

#define NODE "t.json: tree[1] (node \"B\"): "

static void
test_jobs_refusals (void **state)
{
    (void) state;
    const char *exp_demand = "\"demand\": {\"dist\": \"exp\", \"mean_s\": 1}";
    struct {
        const char *jobs, *want;
    } cases[] = {
        {"{\"utilization\": 1, %s}",
         NODE "load.jobs.utilization: must be at most 0.95, got 1 (a saturated node"},
        {"{\"utilization\": 1.5, %s}", "got 1.5 (a saturated node"},
        {"{\"utilization\": 0.96, %s}",
         NODE "load.jobs.utilization: must be at most 0.95, got 0.96"},
        {"{\"utilization\": -0.1, %s}",
         NODE "load.jobs.utilization: must be >= 0, got -0.1"},
        {"{\"utilization\": \"half\", %s}",
         NODE "load.jobs.utilization: expected a number, got string"},
        {"{%s}", NODE "load.jobs: missing required key \"utilization\""},
        {"{\"utilization\": 0.5, %s, \"classes\": [{\"utilization\": 0.5, "
         "\"demand\": {\"dist\": \"exp\", \"mean_s\": 1}}]}",
         NODE "load.jobs: the total utilization of its 2 streams must be at most 0.95, "
         "got 1 (a saturated node"},
        {"{\"utilization\": 0.5, %s, \"classes\": [{\"utilization\": 0.46, "
         "\"demand\": {\"dist\": \"exp\", \"mean_s\": 1}}]}",
         "must be at most 0.95, got 0.96"},
        {"{\"utilization\": 0.5, %s, \"clases\": []}",
         NODE "load.jobs: unknown key \"clases\" (did you mean \"classes\"?)"},
        {"{\"utilization\": 0.5, %s, \"classes\": []}",
         NODE "load.jobs.classes: must not be empty"},
        {"{\"utilization\": 0.5, %s, \"classes\": [3]}",
         NODE "load.jobs.classes[0]: expected an object, got integer"},
        {"{\"classes\": [{\"utilization\": 0.1, %s}], \"demand\": {}}",
         NODE "load.jobs: demand without utilization"},
        {"{\"utilization\": 0.5, \"demand\": {\"dist\": \"exp\", \"mean_s\": -1}}%.0s",
         NODE "load.jobs.demand.mean_s: must be > 0, got -1"},
        {"{\"utilization\": 0.5, \"demand\": {\"dist\": \"exp\", \"mean_s\": 1e-4}}%.0s",
         NODE "load.jobs.demand.mean_s: must be at least 0.001 s, got 0.0001"},
        {"{\"utilization\": 0.5, \"demand\": {\"dist\": \"exp\", \"mean_s\": 1e9}}%.0s",
         NODE "load.jobs.demand.mean_s: must be at most 3.2e+07, got 1e+09"},
        {"{\"utilization\": 0.5, \"demand\": {\"dist\": \"exp\", \"mean_s\": 1, "
         "\"cv\": 2}}%.0s",
         NODE "load.jobs.demand.cv: cv 2: an exponential's cv is 1"},
        {"{\"utilization\": 0.5, \"demand\": {\"dist\": \"erlang\", \"mean_s\": 1, "
         "\"cv\": 0.6}}%.0s", NODE "load.jobs.demand.cv: cv 0.6"},
        {"{\"utilization\": 0.5, \"demand\": {\"dist\": \"h2\", \"mean_s\": 1}}%.0s",
         NODE "load.jobs.demand: missing required key \"cv\""},
        {"{\"utilization\": 0.5, \"demand\": {\"dist\": \"h2\", \"mean_s\": 1, "
         "\"cv\": 0.5}}%.0s", NODE "load.jobs.demand.cv: cv 0.5"},
        {"{\"utilization\": 0.5, \"demand\": {\"dist\": \"weibull\", \"mean_s\": 1}}%.0s",
         NODE "load.jobs.demand.dist: unknown distribution \"weibull\""},
        {"{\"utilization\": 0.5, %s, \"arrivals\": {\"dist\": \"exp\", \"cv\": 0.5}}",
         NODE "load.jobs.arrivals.cv: cv 0.5: an exponential's cv is 1"},
        {"{\"utilization\": 0.5, %s, \"arrivals\": {\"dist\": \"exp\", \"mean_s\": 1}}",
         NODE "load.jobs.arrivals: unknown key \"mean_s\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char *jobs = xasprintf (cases[k].jobs, exp_demand);
        char *load = xasprintf ("{\"jobs\": %s}", jobs);
        assert_refused (NULL, load, cases[k].want);
        free (load);
        free (jobs);
    }
}

static void
test_other_refusals (void **state)
{
    (void) state;
    struct {
        const char *load, *want;
    } cases[] = {
        {"{\"contenders\": [{\"compute\": 1.5}]}",
         NODE "load.contenders[0].compute: must be at most 1, got 1.5"},
        {"{\"contenders\": [{\"compute\": 0.5}, {\"compute\": -0.5}]}",
         NODE "load.contenders[1].compute: must be >= 0, got -0.5"},
        {"{\"contenders\": [{\"compute\": 0.5, \"comm\": 0.6, \"msg_bytes\": 8}]}",
         NODE "load.contenders[0]: compute 0.5 + comm 0.6 is more than 1"},
        {"{\"contenders\": [{\"comm\": 0.5}]}",
         NODE "load.contenders[0]: missing required key \"msg_bytes\""},
        {"{\"contenders\": [{\"comm\": 0.5, \"msg_bytes\": 0}]}",
         NODE "load.contenders[0].msg_bytes: expected an integer in 1..67108864, got 0"},
        {"{\"contenders\": [{\"compute\": 0.5, \"period_s\": 0}]}",
         NODE "load.contenders[0].period_s: must be > 0, got 0"},
        {"{\"contenders\": [{\"cpu\": 0.5}]}",
         NODE "load.contenders[0]: unknown key \"cpu\""},
        {"{\"contenders\": {}}", NODE "load.contenders: expected an array, got object"},
        {"{\"contenders\": [{\"compute\": 1}], \"delay_comm\": [1, 2]}",
         NODE "load.delay_comm: has 2 entries, expected 1"},
        {"{\"contenders\": [{\"compute\": 1}], \"delay_comm\": [-1]}",
         NODE "load.delay_comm[0]: must be in [0, 1000], got -1"},
        {"{\"contenders\": [{\"compute\": 1}], \"delay_comm\": [null]}",
         NODE "load.delay_comm[0]: expected a number, got null"},
        {"{\"steps\": [{\"at_s\": 5, \"load\": 2}, {\"at_s\": 3, \"load\": 1}]}",
         NODE "load.steps[1]: at_s 3 is before the previous step's 5"},
        {"{\"steps\": [{\"at_s\": 5, \"load\": 2}, {\"at_s\": 5, \"load\": 1}]}",
         NODE "load.steps[1]: at_s 5 repeats the previous step's"},
        {"{\"steps\": [{\"at_s\": 0, \"load\": 0.5}]}",
         NODE "load.steps[0]: load 0.5 is not a finite L >= 1"},
        {"{\"steps\": [{\"at_s\": 0, \"load\": 65}]}",
         NODE "load.steps[0]: load 65 is more than 64"},
        {"{\"steps\": [{\"at_s\": -1, \"load\": 2}]}",
         NODE "load.steps[0]: at_s -1 is not a time in [0, 3.2e+07] s"},
        {"{\"steps\": [{\"at_s\": 1}]}",
         NODE "load.steps[0]: missing required key \"load\""},
        {"{\"seed\": -1}", NODE "load.seed: expected an integer in 0..9223372036854775807"},
        {"{\"seed\": 1.5}", NODE "load.seed: expected an integer"},
        {"{\"sed\": 1}", NODE "load: unknown key \"sed\" (did you mean \"seed\"?)"},
        {"[]", NODE "load: expected an object, got array"},
        {"{\"trace_rows\": [[0, 1]]}",
         NODE "load.trace_rows: given without \"trace\""},
        {"{\"trace\": \"x.csv\", \"trace_rows\": [[0, 1], [0, 2]]}",
         NODE "load.trace_rows[1]: time_s 0 repeats the previous row's"},
        {"{\"trace\": \"x.csv\", \"trace_rows\": [[0]]}",
         NODE "load.trace_rows[0]: must not be empty"},
        {"{\"trace\": \"x.csv\", \"trace_rows\": [[0, \"1\"]]}",
         NODE "load.trace_rows[0]: expected [time_s, load], two numbers"},
        {"{\"trace\": 3}", NODE "load.trace: expected a string, got integer"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        assert_refused (NULL, cases[k].load, cases[k].want);
}

/*  JSON has no NaN or infinity; jansson refuses a number too large for a
 *  double, so 1e999 never reaches the reader. */
static void
test_non_finite_never_reaches_the_reader (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    config_t *cfg = load_config (NULL, "{\"steps\": [{\"at_s\": 1e999, \"load\": 2}]}",
                                 err);
    assert_null (cfg);
    assert_non_null (strstr (err, "t.json:"));
    assert_non_null (strstr (err, "overflow"));
    cfg = load_config (NULL, "{\"steps\": [{\"at_s\": NaN, \"load\": 2}]}", err);
    assert_null (cfg);
}

static void
test_trace_refusals (void **state)
{
    (void) state;
    char dir[256], path[300];
    test_temp_dir (dir, sizeof dir, "test_load");
    struct {
        const char *text, *want;
    } cases[] = {
        {"time_s,load\n0,1\n3,2\n2,1\n",
         NODE "load.trace: lab3.csv:4: time_s 2 is before the previous row's 3"},
        {"0,1\n0,2\n", NODE "load.trace: lab3.csv:2: time_s 0 repeats the previous row's"},
        {"0,1\n1,0.5\n", NODE "load.trace: lab3.csv:2: load 0.5 is not a finite L >= 1"},
        {"0,1\n1,nan\n", "lab3.csv:2: load nan is not a finite L >= 1"},
        {"0,1\n1,inf\n", "lab3.csv:2: load inf is not a finite L >= 1"},
        {"0,1\n1,100\n", "lab3.csv:2: load 100 is more than 64"},
        {"0,1\n-1,2\n", "lab3.csv:2: time_s -1 is not a time in"},
        {"0,1\n1;2\n", NODE "load.trace: lab3.csv:2: expected \"time_s,load\", two "
                       "numbers, got \"1;2\""},
        {"0,1\n1,2,3\n", "lab3.csv:2: expected \"time_s,load\""},
        {"0,1\n1,2x\n", "lab3.csv:2: expected \"time_s,load\""},
        {"0,1\ntime_s,load\n", "lab3.csv:2: expected \"time_s,load\""},
        {"# nothing\n\n", NODE "load.trace: lab3.csv: no rows"},
        {"", "lab3.csv: no rows"},
    };
    snprintf (path, sizeof path, "%s/lab3.csv", dir);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        test_write_file (path, cases[k].text);
        assert_refused (dir, "{\"trace\": \"lab3.csv\"}", cases[k].want);
    }
    assert_refused (dir, "{\"trace\": \"missing.csv\"}",
                    NODE "load.trace: missing.csv: cannot open: No such file or directory");
    /*  Not a regular file: refused, not waited on (a FIFO with no writer
     *  would block an open that waits). */
    assert_refused (dir, "{\"trace\": \".\"}", NODE "load.trace: .: not a regular file");
    snprintf (path, sizeof path, "%s/fifo", dir);
    assert_int_equal (mkfifo (path, 0600), 0);
    assert_refused (dir, "{\"trace\": \"fifo\"}", "load.trace: fifo: not a regular file");
    unlink (path);
    snprintf (path, sizeof path, "%s/lab3.csv", dir);
    /*  Relative to the config's directory, not the working one. */
    test_write_file ("test_load_cwd.csv", "0,1\n");
    assert_refused (dir, "{\"trace\": \"test_load_cwd.csv\"}", "cannot open");
    unlink ("test_load_cwd.csv");
    /*  A file past the limits. */
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    for (int k = 0; k <= LOAD_MAX_TRACE_ROWS; k++)
        fprintf (f, "%d,1\n", k);
    fclose (f);
    assert_refused (dir, "{\"trace\": \"lab3.csv\"}", "lab3.csv:100001: more than 100000 rows");
    f = fopen (path, "w");
    assert_non_null (f);
    fprintf (f, "0,1\n");
    for (unsigned k = 0; k <= LOAD_MAX_TRACE_BYTES / 64; k++)
        fprintf (f, "# %-61s\n", "padding");
    fclose (f);
    assert_refused (dir, "{\"trace\": \"lab3.csv\"}", "lab3.csv: more than 16777216 bytes");
    test_remove_dir (dir);
}

/* ------------------------------------------------------------------------
 *  Predictions.
 */

static void
test_predictions (void **state)
{
    (void) state;
    const load_t *l;
    assert_near (load_predict (NULL, 0, 0, 0), 1);
    config_t *cfg = must_load (NULL, "{\"jobs\": {\"utilization\": 0.5, \"demand\": "
                               "{\"dist\": \"exp\", \"mean_s\": 0.2}}}", &l);
    assert_near (load_predict (l, 0, 0, 0), 0.5);
    assert_near (load_predict_long_run (l, 0, 0), 0.5);
    config_destroy (&cfg);

    cfg = must_load (NULL, "{\"contenders\": [{\"compute\": 1}, {\"compute\": 1}, "
                     "{\"compute\": 1}]}", &l);
    assert_near (load_predict (l, 3, 0.05, 10), 0.25);
    config_destroy (&cfg);

    cfg = must_load (NULL, "{\"steps\": [{\"at_s\": 10, \"load\": 2}]}", &l);
    assert_near (load_predict (l, 0, 0, 0), 1);
    assert_near (load_predict (l, 9.999, 0, 0), 1);
    assert_near (load_predict (l, 10, 0, 0), 0.5);
    assert_near (load_predict (l, 1e6, 0, 0), 0.5);
    assert_near (load_predict_long_run (l, 0, 0), 0.5);
    config_destroy (&cfg);

    /*  Steps and trace multiply; the long run takes each one's last L. */
    cfg = must_load (NULL, "{\"jobs\": {\"utilization\": 0.5, \"demand\": {\"dist\": "
                     "\"exp\", \"mean_s\": 1}}, \"steps\": [{\"at_s\": 0, \"load\": 2}, "
                     "{\"at_s\": 5, \"load\": 4}, {\"at_s\": 7, \"load\": 1}], \"trace\":"
                     " \"x.csv\", \"trace_rows\": [[2, 3], [6, 1.5]]}", &l);
    assert_near (load_level_at (l, 1), 2);
    assert_near (load_level_at (l, 2), 6);
    assert_near (load_level_at (l, 5.5), 12);
    assert_near (load_level_at (l, 6), 6);
    assert_near (load_level_at (l, 8), 1.5);
    /*  Where the level may change next: the steps' and the rows' times. */
    assert_near (load_next_point (l, -1), 0);
    assert_near (load_next_point (l, 0), 2);
    assert_near (load_next_point (l, 2), 5);
    assert_near (load_next_point (l, 5.5), 6);
    assert_near (load_next_point (l, 6), 7);
    assert_true (isinf (load_next_point (l, 7)));
    assert_true (isinf (load_next_point (NULL, 0)));
    assert_near (load_predict (l, 5.5, 0, 0), 0.5 / 12);
    assert_near (load_predict_long_run (l, 0, 0), 0.5 / 1.5);
    config_destroy (&cfg);
}

/*  Communicating contenders: the delays derived from the link and IR, or
 *  the description's own. */
static void
test_delay_comm (void **state)
{
    (void) state;
    const load_t *l;
    double d[2];
    config_t *cfg = must_load (NULL, "{\"contenders\": [{\"comm\": 1, \"msg_bytes\": "
                               "800}, {\"compute\": 1}]}", &l);
    /*  ir_recv 0.05 x 10 MB/s: i = 1 takes 1/2 the link, costs 0.25. */
    load_delay_comm (l, 0.05, 10, d);
    assert_near (d[0], 1 / 0.75 - 1);
    assert_near (d[1], 1 / (1 - 0.5 * 2 / 3) - 1);
    /*  One computes, one communicates: 1 + 1 + delay(1). */
    assert_near (load_predict (l, 0, 0.05, 10), 1 / (2 + 1 / 0.75 - 1));
    assert_near (load_predict (l, 0, 0, 0), 0.5);
    load_delay_comm (l, 0.2, 10, d);   /* the product reaches 1: no delay */
    assert_near (d[1], 0);
    config_destroy (&cfg);
    cfg = must_load (NULL, "{\"contenders\": [{\"comm\": 1, \"msg_bytes\": 800}], "
                     "\"delay_comm\": [2]}", &l);
    load_delay_comm (l, 0.05, 10, d);
    assert_near (d[0], 2);
    assert_near (load_predict (l, 0, 0.05, 10), 1.0 / 3);
    config_destroy (&cfg);
}

/* ------------------------------------------------------------------------
 *  --load files, the loaded bound, the recorder.
 */

static void
test_load_file (void **state)
{
    (void) state;
    char dir[256], path[300], csv[300], err[TF_ERRLEN];
    test_temp_dir (dir, sizeof dir, "test_load");
    snprintf (path, sizeof path, "%s/loads.json", dir);
    snprintf (csv, sizeof csv, "%s/b.csv", dir);
    test_write_file (csv, "0,2\n");
    const load_t *l;
    config_t *cfg = must_load (NULL, "{\"steps\": [{\"at_s\": 0, \"load\": 4}]}", &l);
    test_write_file (path, "{\"A\": {\"jobs\": {\"utilization\": 0.5, \"demand\": "
                     "{\"dist\": \"exp\", \"mean_s\": 0.2}}, \"seed\": 11}, "
                     "\"B\": {\"trace\": \"b.csv\"}}");
    if (config_apply_load_file (cfg, path, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_non_null (cfg->nodes[0].load);
    assert_true (cfg->nodes[0].load->seed == 11);
    assert_int_equal (cfg->nodes[1].load->nsteps, 0);   /* replaced */
    assert_int_equal (cfg->nodes[1].load->ntrace, 1);
    assert_near (load_predict_long_run (cfg->nodes[1].load, 0, 0), 0.5);

    /*  A bad file changes nothing and names file, node and key. */
    test_write_file (path, "{\"B\": {\"steps\": [{\"at_s\": 0, \"load\": 3}]}, "
                     "\"A\": {\"jobs\": {\"utilization\": 1, \"demand\": "
                     "{\"dist\": \"exp\", \"mean_s\": 0.2}}}}");
    assert_int_equal (config_apply_load_file (cfg, path, err, sizeof err), -1);
    assert_non_null (strstr (err, "loads.json: node \"A\": jobs.utilization: must be at "
                                  "most 0.95, got 1 (a saturated node"));
    assert_int_equal (cfg->nodes[1].load->ntrace, 1);
    test_write_file (path, "{\"Lab9\": {}}");
    assert_int_equal (config_apply_load_file (cfg, path, err, sizeof err), -1);
    assert_non_null (strstr (err, "loads.json: no node named \"Lab9\" in t.json"));
    test_write_file (path, "{\"A\": 3}");
    assert_int_equal (config_apply_load_file (cfg, path, err, sizeof err), -1);
    assert_non_null (strstr (err, "loads.json: node \"A\": expected an object"));
    test_write_file (path, "[1]");
    assert_int_equal (config_apply_load_file (cfg, path, err, sizeof err), -1);
    assert_non_null (strstr (err, "loads.json: expected an object (node name -> load)"));
    test_write_file (path, "{\"A\": {}, \"A\": {}}");
    assert_int_equal (config_apply_load_file (cfg, path, err, sizeof err), -1);
    assert_non_null (strstr (err, "loads.json:1:"));
    assert_int_equal (config_apply_load_file (cfg, "/nonexistent/l.json", err,
                                              sizeof err), -1);
    assert_non_null (strstr (err, "/nonexistent/l.json: cannot open"));
    config_destroy (&cfg);
    test_remove_dir (dir);
}

/*  --loaded prices a loaded node lower, offline and in the tree alike. */
static void
test_loaded_bound (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    const char *text = "{\"tasks\": {\"count\": 10, \"input_mb\": 0, \"units\": 2}, "
                       "\"tree\": [{\"name\": \"A\", \"compute\": 10, \"load\": {\"jobs\":"
                       " {\"utilization\": 0.5, \"demand\": {\"dist\": \"exp\", "
                       "\"mean_s\": 0.2}}}}]}";
    config_t *cfg = config_load_string (text, "b.json", err, sizeof err);
    if (!cfg)
        fail_msg ("%s", err);
    bound_app_t app = bound_app_of (cfg);
    assert_near (bound_compute_rate (cfg, 0, &app), 10);
    bound_tree_t *plain = bound_tree_new (cfg, BOUND_MULTI, &app, err, sizeof err);
    app.loaded = 1;
    assert_near (bound_compute_rate (cfg, 0, &app), 5);
    bound_tree_t *loaded = bound_tree_new (cfg, BOUND_MULTI, &app, err, sizeof err);
    assert_near (plain->bound, 5);
    assert_near (loaded->bound, 2.5);
    subtree_t *st = subtree_new (cfg, 0);
    assert_int_equal (subtree_step (st), 1);
    assert_near (subtree_bounds (st)[BOUND_MULTI], 2.5);
    subtree_destroy (&st);
    bound_tree_destroy (&plain);
    bound_tree_destroy (&loaded);
    config_destroy (&cfg);
}

static void
test_recorder_arithmetic (void **state)
{
    (void) state;
    loadrec_sample_t a, b;
    assert_int_equal (loadrec_parse_stat ("cpu  10 2 3 100 5 1 1 1 7 0\ncpu0 1 2 3 4 5 6 "
                                          "7 8\n", &a), 0);
    assert_true (a.busy == 18 && a.total == 123);
    assert_int_equal (loadrec_parse_stat ("intr 1\ncpu  40 2 3 130 5 1 1 1\n", &b), 0);
    assert_true (b.busy == 48 && b.total == 183);
    assert_near (loadrec_level (&a, &b), 1.5);   /* 30 busy of 60 */
    assert_near (loadrec_level (&b, &a), 1);     /* counters went back */
    assert_near (loadrec_level (&a, &a), 1);     /* no jiffy passed */
    assert_int_equal (loadrec_parse_stat ("cpu0 1 2 3 4 5 6 7 8\n", &a), -1);
    assert_int_equal (loadrec_parse_stat ("cpu  1 2 3\n", &a), -1);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_jobs_defaults_and_classes),
        cmocka_unit_test (test_contenders_steps_defaults),
        cmocka_unit_test (test_trace_file_and_inline_rows),
        cmocka_unit_test (test_round_trips),
        cmocka_unit_test (test_round_trip_most_streams),
        cmocka_unit_test (test_jobs_refusals),
        cmocka_unit_test (test_other_refusals),
        cmocka_unit_test (test_non_finite_never_reaches_the_reader),
        cmocka_unit_test (test_trace_refusals),
        cmocka_unit_test (test_predictions),
        cmocka_unit_test (test_delay_comm),
        cmocka_unit_test (test_load_file),
        cmocka_unit_test (test_loaded_bound),
        cmocka_unit_test (test_recorder_arithmetic),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
