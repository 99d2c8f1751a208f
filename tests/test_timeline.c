/*  test_timeline — the Chrome trace a --trace run writes
 *  (controller/timeline.h): a node's process and tracks are named, its
 *  spans become X events in platform microseconds, the gaps of a compute
 *  track become idle events from 0 to the node's end and nothing on one
 *  track overlaps; the file appears whole under its name or not at all;
 *  a path that cannot be written is refused before a run.
 */
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

#include "controller/timeline.h"
#include "overlay/util.h"
#include "tests/helpers.h"

typedef struct {
    char dir[64];
    char path[128];
} fixture_t;

static int
setup (void **state)
{
    fixture_t *f = calloc (1, sizeof *f);
    test_temp_dir (f->dir, sizeof f->dir, "test_timeline");
    snprintf (f->path, sizeof f->path, "%s/t.json", f->dir);
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    test_remove_dir (f->dir);
    free (f);
    return 0;
}

/*  The events of the file at path, with a name (X) or thread name (M). */
static json_t *
load_events (const char *path)
{
    json_error_t e;
    json_t *doc = json_load_file (path, 0, &e);
    if (!doc)
        fail_msg ("%s: %s", path, e.text);
    assert_string_equal (json_string_value (json_object_get (doc, "displayTimeUnit")),
                         "ms");
    json_t *events = json_incref (json_object_get (doc, "traceEvents"));
    json_decref (doc);
    return events;
}

/*  The X events on track tid of pid, and the name of that track. */
static int
spans_on (json_t *events, int pid, int tid, const char *cat, double *ts, double *dur,
          int most)
{
    size_t i;
    json_t *e;
    int n = 0;
    json_array_foreach (events, i, e) {
        if (strcmp (json_string_value (json_object_get (e, "ph")), "X") != 0
            || json_integer_value (json_object_get (e, "pid")) != pid
            || json_integer_value (json_object_get (e, "tid")) != tid
            || strcmp (json_string_value (json_object_get (e, "cat")), cat) != 0)
            continue;
        if (n < most) {
            ts[n] = json_number_value (json_object_get (e, "ts"));
            dur[n] = json_number_value (json_object_get (e, "dur"));
        }
        n++;
    }
    return n;
}

static int
has_track (json_t *events, int pid, int tid, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach (events, i, e)
        if (!strcmp (json_string_value (json_object_get (e, "name")), "thread_name")
            && json_integer_value (json_object_get (e, "pid")) == pid
            && json_integer_value (json_object_get (e, "tid")) == tid
            && !strcmp (json_string_value (json_object_get (json_object_get (e, "args"),
                                                             "name")), name))
            return 1;
    return 0;
}

static void
test_spans_tracks_and_idle_gaps (void **state)
{
    fixture_t *f = *state;
    /*  Spans in the order they ended, as a node sends them. */
    trace_span_t spans[] = {
        {.kind = TRACE_RECEIVE, .lane = 0, .task = 4, .start = 0.5, .end = 1.0},
        {.kind = TRACE_COMPUTE, .lane = 0, .task = 4, .start = 1.0, .end = 2.0},
        {.kind = TRACE_SEND, .lane = 1, .task = 5, .start = 1.5, .end = 2.5},
        {.kind = TRACE_COMPUTE, .lane = 0, .task = 6, .start = 3.0, .end = 3.5},
    };
    const char *kids[] = {"a", "b"};
    timeline_node_t node = {.name = "mid", .index = 2, .slots = 1, .nchildren = 2,
                            .children = kids, .spans = spans, .nspans = 4, .end = 5.0};
    char err[TF_ERRLEN];
    timeline_t *t = timeline_open (f->path, 2.0, err, sizeof err);
    assert_non_null (t);
    timeline_add_node (t, &node);
    json_t *other = json_pack ("{s:s}", "time_base", "platform");
    assert_int_equal (timeline_close (&t, other, err, sizeof err), 0);
    json_decref (other);
    assert_null (t);
    json_t *events = load_events (f->path);
    int pid = 3;
    assert_true (has_track (events, pid, TIMELINE_TID_COMPUTE, "compute"));
    assert_true (has_track (events, pid, TIMELINE_TID_RECEIVE, "receive"));
    assert_true (has_track (events, pid, TIMELINE_TID_SEND + 1, "send \u2192 b"));
    double ts[4], dur[4];
    assert_int_equal (spans_on (events, pid, TIMELINE_TID_COMPUTE, "compute", ts, dur, 4),
                      2);
    assert_true (ts[0] == 2e6 && dur[0] == 2e6 && ts[1] == 6e6 && dur[1] == 1e6);
    /*  Idle: 0 to 1, 2 to 3, 3.5 to 5 (seconds), scaled by 2. */
    assert_int_equal (spans_on (events, pid, TIMELINE_TID_COMPUTE, "idle", ts, dur, 4), 3);
    assert_true (ts[0] == 0 && dur[0] == 2e6);
    assert_true (ts[1] == 4e6 && dur[1] == 2e6);
    assert_true (ts[2] == 7e6 && dur[2] == 3e6);
    assert_int_equal (spans_on (events, pid, TIMELINE_TID_SEND + 1, "send", ts, dur, 4), 1);
    assert_true (ts[0] == 3e6 && dur[0] == 2e6);
    assert_int_equal (spans_on (events, pid, TIMELINE_TID_RECEIVE, "receive", ts, dur, 4),
                      1);
    json_decref (events);
}

static void
test_slots_have_a_track_each_and_the_root_receives_nothing (void **state)
{
    fixture_t *f = *state;
    trace_span_t spans[] = {
        {.kind = TRACE_COMPUTE, .lane = 1, .task = 1, .start = 0, .end = 1.0},
        {.kind = TRACE_COMPUTE, .lane = 0, .task = 2, .start = 0.5, .end = 1.0},
    };
    timeline_node_t node = {.name = "root", .index = 0, .root = 1, .slots = 3,
                            .spans = spans, .nspans = 2, .end = 1.0};
    char err[TF_ERRLEN];
    timeline_t *t = timeline_open (f->path, 1.0, err, sizeof err);
    timeline_add_node (t, &node);
    assert_int_equal (timeline_close (&t, NULL, err, sizeof err), 0);
    json_t *events = load_events (f->path);
    double ts[4], dur[4];
    for (int k = 0; k < 3; k++) {
        char name[32];
        snprintf (name, sizeof name, "compute slot %d", k);
        assert_true (has_track (events, 1, TIMELINE_TID_COMPUTE + k, name));
    }
    assert_false (has_track (events, 1, TIMELINE_TID_RECEIVE, "receive"));
    assert_int_equal (spans_on (events, 1, TIMELINE_TID_COMPUTE + 1, "compute", ts, dur,
                                4), 1);
    assert_int_equal (spans_on (events, 1, TIMELINE_TID_COMPUTE, "idle", ts, dur, 4), 1);
    assert_true (ts[0] == 0 && dur[0] == 0.5e6);
    /*  An unused slot is idle throughout. */
    assert_int_equal (spans_on (events, 1, TIMELINE_TID_COMPUTE + 2, "idle", ts, dur, 4),
                      1);
    assert_true (ts[0] == 0 && dur[0] == 1e6);
    json_decref (events);
}

/*  The counter events ("C", name "background") of pid: their ts and
 *  args.share, at most `most`; returns how many there are. */
static int
counters_of (json_t *events, int pid, double *ts, double *share, int most)
{
    size_t i;
    json_t *e;
    int n = 0;
    json_array_foreach (events, i, e) {
        if (strcmp (json_string_value (json_object_get (e, "ph")), "C") != 0
            || json_integer_value (json_object_get (e, "pid")) != pid)
            continue;
        assert_string_equal (json_string_value (json_object_get (e, "name")), "background");
        if (n < most) {
            ts[n] = json_number_value (json_object_get (e, "ts"));
            share[n] = json_number_value (json_object_get (json_object_get (e, "args"),
                                                           "share"));
        }
        n++;
    }
    return n;
}

/*  A node with background points gets a counter per point, at its start
 *  in platform microseconds (the points are platform seconds already:
 *  the time scale does not apply); one without gets none. */
static void
test_background_is_a_counter_track (void **state)
{
    fixture_t *f = *state;
    timeline_point_t bg[] = {{0.5, 2, 0.5}, {2, 4.5, 0.25}};
    timeline_node_t loaded = {.name = "Lab3", .index = 1, .slots = 1, .end = 5.0,
                              .background = bg, .nbackground = 2};
    timeline_node_t plain = {.name = "root", .index = 0, .root = 1, .slots = 1,
                             .end = 5.0};
    char err[TF_ERRLEN];
    timeline_t *t = timeline_open (f->path, 20.0, err, sizeof err);
    timeline_add_node (t, &plain);
    timeline_add_node (t, &loaded);
    assert_int_equal (timeline_close (&t, NULL, err, sizeof err), 0);
    json_t *events = load_events (f->path);
    double ts[4], share[4];
    assert_int_equal (counters_of (events, 2, ts, share, 4), 2);
    assert_true (ts[0] == 0.5e6 && share[0] == 0.5 && ts[1] == 2e6 && share[1] == 0.25);
    assert_int_equal (counters_of (events, 1, ts, share, 4), 0);
    json_decref (events);
}

/*  The samples' CSV as a node writes it gives its points; a header
 *  without load_share gives none; bad rows are refused naming the line. */
static void
test_background_from_samples (void **state)
{
    (void) state;
    timeline_point_t *p;
    size_t n;
    char err[TF_ERRLEN] = "";
    const char *csv = "t0,t1,busy,units_per_s,recv_mbps,send_mbps_x,load_share,"
                      "measured_units_per_s\n"
                      "0.25,2,1,5,0,0,0.5,4\n"
                      "2,4.5,0,1,0,0,0.125,\n";
    assert_int_equal (timeline_background_decode (csv, &p, &n, err, sizeof err), 0);
    assert_int_equal (n, 2);
    assert_true (p[0].t0 == 0.25 && p[0].t1 == 2 && p[0].share == 0.5);
    assert_true (p[1].t0 == 2 && p[1].t1 == 4.5 && p[1].share == 0.125);
    free (p);
    assert_int_equal (timeline_background_decode ("t0,t1,busy\n0,1,1\n", &p, &n, err,
                                                  sizeof err), 0);
    assert_true (p == NULL && n == 0);
    static const char *const bad[][2] = {
        {"t0,t1,load_share\n0,1,0.5\n1,2,-0.5\n", "line 3"},
        {"t0,t1,load_share\n1,0.5,0.2\n", "line 2"},
        {"t0,t1,load_share\n-1,0.5,0.2\n", "line 2"},
        {"t0,t1,load_share\n0,1,x\n", "line 2"},
        {"t0,t1,load_share\n0,1,0.5x\n", "line 2"},
        {"t0,t1,load_share\n0,1\n", "line 2"},
        {"t0,t1,load_share\n0,1,nan\n", "line 2"},
        {"t0,t1,load_share\n0,1,0.5\n\n2,3,0\n", "line 3"},
        {"a,t1,load_share\n0,1,0.5\n", "line 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        if (timeline_background_decode (bad[i][0], &p, &n, err, sizeof err) != -1)
            fail_msg ("accepted %s", bad[i][0]);
        assert_true (p == NULL && n == 0);
        if (!strstr (err, bad[i][1]))
            fail_msg ("\"%s\" does not name %s", err, bad[i][1]);
    }
    /*  One row more than the limit. */
    size_t rows = TIMELINE_MAX_SAMPLES + 1;
    char *big = xmalloc (32 + rows * 8), *at = big;
    at += sprintf (at, "t0,t1,load_share\n");
    for (size_t i = 0; i < rows; i++)
        at += sprintf (at, "0,1,0\n");
    assert_int_equal (timeline_background_decode (big, &p, &n, err, sizeof err), -1);
    assert_non_null (strstr (err, "more than"));
    big[strlen (big) - 6] = '\0';   /* at the limit: accepted */
    assert_int_equal (timeline_background_decode (big, &p, &n, err, sizeof err), 0);
    assert_int_equal (n, TIMELINE_MAX_SAMPLES);
    free (p);
    free (big);
}

static void
test_a_file_that_cannot_be_written_is_not_left_half (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN], path[160];
    snprintf (path, sizeof path, "%s/gone/t.json", f->dir);
    assert_null (timeline_open (path, 1.0, err, sizeof err));
    assert_non_null (strstr (err, "cannot write"));
    assert_non_null (strstr (err, path));
    /*  Its directory vanishes before the end: nothing appears. */
    snprintf (path, sizeof path, "%s/sub", f->dir);
    assert_int_equal (mkdir (path, 0755), 0);
    strcat (path, "/t.json");
    timeline_t *t = timeline_open (path, 1.0, err, sizeof err);
    assert_non_null (t);
    snprintf (path, sizeof path, "%s/sub", f->dir);
    tf_remove_tree (path, 0);
    assert_int_equal (timeline_close (&t, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, "cannot write"));
    assert_int_equal (access (path, F_OK), -1);
}

static void
test_paths_are_checked_before_a_run (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN], path[160];
    assert_int_equal (timeline_check_path (f->path, NULL, err, sizeof err), 0);
    assert_int_equal (timeline_check_path ("t.json", NULL, err, sizeof err), 0);
    assert_int_equal (timeline_check_path (f->dir, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, "is a directory"));
    snprintf (path, sizeof path, "%s/no/t.json", f->dir);
    assert_int_equal (timeline_check_path (path, NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, "No such file"));
    assert_int_equal (timeline_check_path ("", NULL, err, sizeof err), -1);
    /*  In the run's --out, which the run makes: however it is written. */
    char out[160];
    snprintf (out, sizeof out, "%s/no", f->dir);
    assert_int_equal (timeline_check_path (path, out, err, sizeof err), 0);
    snprintf (out, sizeof out, "%s/no//", f->dir);
    assert_int_equal (timeline_check_path (path, out, err, sizeof err), 0);
    assert_int_equal (timeline_check_path ("./fresh/t.json", "fresh", err, sizeof err), 0);
    /*  Not in it: still refused. */
    snprintf (out, sizeof out, "%s/other", f->dir);
    assert_int_equal (timeline_check_path (path, out, err, sizeof err), -1);
    assert_non_null (strstr (err, "No such file"));
    assert_int_equal (timeline_check_path (path, "", err, sizeof err), -1);
}

/*  A declared change is one instant event, process-wide, on the process
 *  of the index given, at its platform time (not scaled again), named as
 *  the log line says it. */
static void
test_change_is_an_instant_event (void **state)
{
    fixture_t *f = *state;
    char err[TF_ERRLEN];
    timeline_t *t = timeline_open (f->path, 20.0, err, sizeof err);
    proto_change_t c = {.node = "Lab3", .what = "compute", .from = 23.86, .to = 5.97,
                        .at_s = 41.25};
    timeline_add_change (t, 1, &c, "Lab3");
    assert_int_equal (timeline_close (&t, NULL, err, sizeof err), 0);
    json_t *events = load_events (f->path);
    assert_int_equal (json_array_size (events), 1);
    json_t *e = json_array_get (events, 0);
    assert_string_equal (json_string_value (json_object_get (e, "ph")), "i");
    assert_string_equal (json_string_value (json_object_get (e, "s")), "p");
    assert_string_equal (json_string_value (json_object_get (e, "name")),
                         "compute 23.9 -> 6.0 units/s");
    assert_int_equal (json_integer_value (json_object_get (e, "pid")), 2);
    assert_true (json_number_value (json_object_get (e, "ts")) == 41.25e6);
    json_t *args = json_object_get (e, "args");
    assert_string_equal (json_string_value (json_object_get (args, "by")), "Lab3");
    assert_true (json_number_value (json_object_get (args, "to")) == 5.97);
    json_decref (events);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_change_is_an_instant_event, setup, teardown),
        cmocka_unit_test_setup_teardown (test_spans_tracks_and_idle_gaps, setup, teardown),
        cmocka_unit_test_setup_teardown (
            test_slots_have_a_track_each_and_the_root_receives_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown (test_background_is_a_counter_track, setup,
                                         teardown),
        cmocka_unit_test (test_background_from_samples),
        cmocka_unit_test_setup_teardown (test_a_file_that_cannot_be_written_is_not_left_half,
                                         setup, teardown),
        cmocka_unit_test_setup_teardown (test_paths_are_checked_before_a_run, setup,
                                         teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
