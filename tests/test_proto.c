/*  test_proto — every message round-trips through its encoder and the
 *  strict decoder, and every kind of malformed message is refused with a
 *  reason instead of being trusted. No sockets: messages are built in
 *  memory.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "overlay/proto.h"
#include "overlay/proto_stats.h"
#include "overlay/trace.h"
#include "overlay/util.h"

static void
decode_ok (zmsg_t *msg, proto_msg_t *out)
{
    char err[TF_ERRLEN] = "";
    if (proto_decode (&msg, out, err, sizeof err) < 0)
        fail_msg ("refused: %s", err);
    assert_null (msg);
}

/*  A raw message: version, command, body text, optional payload text. */
static zmsg_t *
raw (int version, int command, const char *body, const char *payload)
{
    return proto_raw (version, command, body, payload, payload ? strlen (payload) : 0);
}

static void
refused (zmsg_t *msg, const char *why)
{
    char err[TF_ERRLEN] = "";
    proto_msg_t m;
    assert_int_equal (proto_decode (&msg, &m, err, sizeof err), -1);
    assert_null (msg);
    assert_null (m.body);
    assert_null (m.payload);
    if (!strstr (err, why))
        fail_msg ("error \"%s\" does not mention \"%s\"", err, why);
}

static void
test_every_encoder_round_trips (void **state)
{
    (void) state;
    proto_msg_t m;
    decode_ok (proto_hello ("Lab3", 4242), &m);
    assert_int_equal (m.command, PROTO_HELLO);
    assert_string_equal (m.text, "Lab3");
    assert_int_equal (m.pid, 4242);
    proto_msg_clear (&m);

    decode_ok (proto_bound ("tcp://127.0.0.1:5555"), &m);
    assert_string_equal (m.text, "tcp://127.0.0.1:5555");
    proto_msg_clear (&m);

    decode_ok (proto_start ("", 0), &m);
    assert_int_equal (m.command, PROTO_START);
    assert_string_equal (m.text, "");
    assert_int_equal (m.measure, 0);
    proto_msg_clear (&m);
    decode_ok (proto_start ("tcp://127.0.0.1:1", 1), &m);
    assert_int_equal (m.measure, 1);
    proto_msg_clear (&m);

    decode_ok (proto_fail ("no such node"), &m);
    assert_string_equal (m.text, "no such node");
    proto_msg_clear (&m);

    decode_ok (proto_lost ("Lab3", "silent for 2.0 s"), &m);
    assert_int_equal (m.command, PROTO_LOST);
    assert_string_equal (m.text, "Lab3");
    assert_string_equal (m.why, "silent for 2.0 s");
    proto_msg_clear (&m);
    decode_ok (proto_empty (PROTO_BEAT), &m);
    assert_int_equal (m.command, PROTO_BEAT);
    proto_msg_clear (&m);
    /*  The warm-up: one message of PROTO_WARM_FRAMES frames, decoded as
     *  the command itself. */
    zmsg_t *warm = proto_warm (PROTO_PING);
    assert_int_equal (zmsg_size (warm), PROTO_WARM_FRAMES);
    decode_ok (warm, &m);
    assert_int_equal (m.command, PROTO_PING);
    assert_null (m.payload);
    proto_msg_clear (&m);
    decode_ok (proto_warm (PROTO_BEAT), &m);
    assert_int_equal (m.command, PROTO_BEAT);
    proto_msg_clear (&m);

    decode_ok (proto_empty (PROTO_STOP), &m);
    assert_int_equal (m.command, PROTO_STOP);
    proto_msg_clear (&m);
    proto_msg_clear (&m);   /* clearing twice is safe */
}

static void
test_calibration_messages_round_trip (void **state)
{
    (void) state;
    proto_msg_t m;

    const char *names[2] = {"Lab3", "Lab4"};
    decode_ok (proto_measure (3, 1.5, 0.25, names, 2, 0), &m);
    assert_int_equal (m.phase, 3);
    assert_true (m.seconds == 1.5 && m.warmup == 0.25);
    assert_int_equal (m.nstreams, 2);
    assert_string_equal (m.streams[0], "Lab3");
    assert_string_equal (m.streams[1], "Lab4");
    assert_int_equal (m.idle, 0);
    assert_null (json_object_get (m.body, "idle"));   /* written only when true */
    proto_msg_clear (&m);
    decode_ok (proto_measure (4, 1.5, 0.25, NULL, 0, 1), &m);
    assert_int_equal (m.idle, 1);
    assert_int_equal (m.nstreams, 0);
    proto_msg_clear (&m);
    json_t *send = json_pack ("{s:f}", "Lab3", 10.8);
    decode_ok (proto_measured (3, 1.25, 9.06, 0.5, &send), &m);
    assert_null (send);
    assert_true (m.units_per_s == 9.06 && m.recv_mbps == 0.5 && m.seconds == 1.25);
    assert_true (json_number_value (json_object_get (m.object, "Lab3")) == 10.8);
    proto_msg_clear (&m);
}

static void
test_peer_messages_round_trip (void **state)
{
    (void) state;
    proto_msg_t m;

    decode_ok (proto_request (3), &m);
    assert_int_equal (m.n, 3);
    proto_msg_clear (&m);

    zframe_t *payload = zframe_new ("abcdef", 6);
    decode_ok (proto_chunk (77, 2.5, 10, 1, 2, 0, NULL, 0, &payload), &m);
    assert_null (payload);
    assert_int_equal (m.command, PROTO_CHUNK);
    assert_int_equal (m.task, 77);
    assert_true (m.units == 2.5);
    assert_int_equal (m.bytes, 10);
    assert_int_equal (m.index, 1);
    assert_int_equal (m.count, 2);
    assert_int_equal (zframe_size (m.payload), 6);
    assert_memory_equal (zframe_data (m.payload), "abcdef", 6);
    proto_msg_clear (&m);

    decode_ok (proto_ack (77, 1), &m);
    assert_int_equal (m.task, 77);
    assert_int_equal (m.index, 1);
    proto_msg_clear (&m);

    const proto_done_t done[2] = {{5, 1}, {(uint64_t) INT64_MAX - 1, 2}};
    decode_ok (proto_done (PROTO_DONE, done, 2, NULL), &m);
    assert_int_equal (m.ndone, 2);
    assert_true (m.done[0].task == 5 && m.done[0].node == 1);
    assert_true (m.done[1].task == (uint64_t) INT64_MAX - 1 && m.done[1].node == 2);
    proto_msg_clear (&m);

    decode_ok (proto_done (PROTO_RECORDED, done, 1, NULL), &m);
    assert_int_equal (m.command, PROTO_RECORDED);
    assert_int_equal (m.ndone, 1);
    assert_string_equal (proto_command_str (PROTO_RECORDED), "RECORDED");
    proto_msg_clear (&m);

    const double bounds[BOUND_MODEL_COUNT] = {6.5, 6.25, 7.25};
    decode_ok (proto_subtree (bounds), &m);
    for (int k = 0; k < BOUND_MODEL_COUNT; k++)
        assert_true (m.bounds[k] == bounds[k]);
    assert_true (isnan (m.live_compute) && isnan (m.live_ir_recv));
    proto_msg_clear (&m);
    /*  An adapting run's SUBTREE carries the live compute and IR_r; each
     *  may be left out. */
    decode_ok (proto_subtree_live (bounds, 11.5, 0.25), &m);
    assert_true (m.bounds[1] == bounds[1]);
    assert_true (m.live_compute == 11.5 && m.live_ir_recv == 0.25);
    proto_msg_clear (&m);
    decode_ok (proto_subtree_live (bounds, NAN, 0), &m);
    assert_true (isnan (m.live_compute) && m.live_ir_recv == 0);
    proto_msg_clear (&m);
    /*  A SUBTREE without every model is refused. */
    json_t *body = json_pack ("{s:{s:f, s:f}}", "bounds", "multi", 6.5, "bwc", 7.25);
    refused (proto_encode (PROTO_SUBTREE, &body, NULL), "no \"single\" bound");

    body = json_pack ("{s:{s:i}}", "stats", "computed", 4);
    decode_ok (proto_encode (PROTO_STATS, &body, NULL), &m);
    assert_int_equal (json_integer_value (json_object_get (m.object, "computed")), 4);
    proto_msg_clear (&m);
    proto_msg_clear (&m);   /* clearing twice is safe */
}

static void
test_malformed_framing_is_refused (void **state)
{
    (void) state;
    refused (zmsg_new (), "header");
    char newer[32];
    snprintf (newer, sizeof newer, "version %d", PROTO_VERSION + 1);
    refused (raw (PROTO_VERSION + 1, PROTO_REQUEST, "{\"n\":1}", NULL), newer);
    refused (raw (PROTO_VERSION, 0, "{}", NULL), "unknown command 0");
    refused (raw (PROTO_VERSION, 200, "{}", NULL), "unknown command 200");
    refused (raw (PROTO_VERSION, PROTO_REQUEST, NULL, NULL), "1 frames, expected 2");
    refused (raw (PROTO_VERSION, PROTO_REQUEST, "{\"n\":1}", "extra"), "3 frames, expected 2");
    refused (raw (PROTO_VERSION, PROTO_CHUNK, "{}", NULL), "2 frames, expected 3");
    refused (raw (PROTO_VERSION, PROTO_REQUEST, "{\"n\":", NULL), "not a JSON object");
    refused (raw (PROTO_VERSION, PROTO_REQUEST, "[1]", NULL), "not a JSON object");
    refused (raw (PROTO_VERSION, PROTO_REQUEST, "{\"n\":1,\"n\":2}", NULL), "not a JSON object");
    zmsg_t *one = zmsg_new ();
    zmsg_addmem (one, "x", 1);
    refused (one, "not 2 bytes");
    /*  A warm-up of another command, of a frame too few, or with a frame
     *  that is not empty. */
    zmsg_t *bad = proto_warm (PROTO_BEAT);
    zframe_t *head = zmsg_first (bad);
    ((byte *) zframe_data (head))[1] = PROTO_STOP;
    refused (bad, "STOP: 256 frames, expected 2");
    bad = proto_warm (PROTO_PING);
    zframe_t *last = zmsg_last (bad);
    zmsg_remove (bad, last);
    zframe_destroy (&last);
    refused (bad, "PING: 255 frames, expected 2 or 256 (the warm-up)");
    bad = proto_warm (PROTO_BEAT);
    last = zmsg_last (bad);
    zmsg_remove (bad, last);
    zframe_destroy (&last);
    zmsg_addstr (bad, "x");
    refused (bad, "BEAT: a warm-up frame is not empty");
    refused (raw (PROTO_VERSION, PROTO_PING, "{}", "x"), "PING: 3 frames, expected 2 or 256");
}

/*  STATS and REPORT: every field of proto_stats_t survives the trip; the
 *  counters are the table's; bad figures are refused naming the field. */
static void
test_stats_round_trip_and_refusals (void **state)
{
    (void) state;
    proto_child_stats_t kids[1] = {{.name = "Lab3", .tasks = 4, .bytes = 1000,
                                    .requested = 5, .send_seconds = 0.5}};
    proto_stats_t s = {.computed = 1, .forwarded = 2, .received = 3, .requested = 4,
                       .bytes_in = 5, .bytes_out = 6, .malformed = 7, .completed = 8,
                       .duplicates = 9, .slots = 10, .requeued = 11, .reclaimed = 12,
                       .returned = 13, .stale = 14, .stale_dropped = 15, .copies = 16,
                       .copies_won = 17, .cancelled = 18, .wasted = 19, .cpu_us = 20,
                       .observe_cpu_us = 21, .compute_seconds = 1.5,
                       .speed_mean = 0.75,
                       .held = 2, .computing = 1, .has_bound = 1, .bound = {1, 2, 3},
                       .has_live_bound = 1, .live_bound = {0.5, 1.5, 2.5},
                       .lag_loop = 0.1, .lag_engine = 0.2, .lag_link = 0.3,
                       .lag_max = 0.05, .children = kids, .nchildren = 1,
                       .samples_csv = xstrdup ("t0,t1\n"),
                       .trace_csv = xstrdup ("kind\n"),
                       .trace_end = 2.5, .trace_dropped = 12};
    s.fit = json_pack ("{s:i}", "n", 3);
    proto_msg_t m;
    decode_ok (proto_stats_encode (PROTO_REPORT, &s), &m);
    assert_int_equal (m.command, PROTO_REPORT);
    proto_stats_t d;
    char err[TF_ERRLEN] = "";
    assert_non_null (m.payload);
    if (proto_stats_decode (m.object, m.payload, 1, 1, &d, err, sizeof err) != 0)
        fail_msg ("%s", err);
    for (int i = 0; i < PROTO_NCOUNTERS; i++)
        assert_int_equal (proto_counter (&d, i), (uint64_t) i + 1);
    assert_true (d.compute_seconds == 1.5 && d.speed_mean == 0.75);
    assert_true (d.held == 2 && d.computing == 1 && d.has_bound && d.bound[2] == 3);
    assert_true (d.has_live_bound && d.live_bound[0] == 0.5 && d.live_bound[1] == 1.5
                 && d.live_bound[2] == 2.5);
    assert_true (d.lag_loop == 0.1 && d.lag_engine == 0.2 && d.lag_link == 0.3
                 && d.lag_max == 0.05);
    assert_int_equal (json_integer_value (json_object_get (d.fit, "n")), 3);
    assert_int_equal (d.nchildren, 1);
    assert_string_equal (d.children[0].name, "Lab3");
    assert_true (d.children[0].bytes == 1000 && d.children[0].send_seconds == 0.5);
    assert_string_equal (d.samples_csv, "t0,t1\n");
    assert_string_equal (d.trace_csv, "kind\n");
    assert_true (d.trace_end == 2.5 && d.trace_dropped == 12);
    proto_stats_clear (&d);
    /*  One child too many for this node. */
    assert_int_equal (proto_stats_decode (m.object, m.payload, 1, 0, &d, err, sizeof err),
                      -1);
    assert_non_null (strstr (err, "children"));
    proto_msg_clear (&m);
    json_decref (s.fit);
    free (s.samples_csv);   /* the encoder copies a string, takes nothing */
    free (s.trace_csv);
    /*  Bad figures, each named. */
    json_t *bad = json_pack ("{s:i}", "bytes_out", -1);
    assert_int_equal (proto_stats_decode (bad, NULL, 0, 0, &d, err, sizeof err), -1);
    assert_non_null (strstr (err, "\"bytes_out\""));
    json_decref (bad);
    bad = json_pack ("{s:{s:s}}", "lag", "loop_s", "x");
    assert_int_equal (proto_stats_decode (bad, NULL, 0, 0, &d, err, sizeof err), -1);
    assert_non_null (strstr (err, "\"loop_s\""));
    json_decref (bad);
    /*  An adapting root's live bound: every model, each >= 0. */
    bad = json_pack ("{s:{s:f, s:f}}", "live_bound", "multi", 1.0, "single", 1.0);
    assert_int_equal (proto_stats_decode (bad, NULL, 0, 0, &d, err, sizeof err), -1);
    assert_non_null (strstr (err, "live_bound: \"bwc\" missing"));
    json_decref (bad);
    bad = json_pack ("{s:{s:f, s:f, s:f}}", "live_bound", "multi", 1.0, "single", -1.0,
                     "bwc", 1.0);
    assert_int_equal (proto_stats_decode (bad, NULL, 0, 0, &d, err, sizeof err), -1);
    assert_non_null (strstr (err, "\"single\""));
    json_decref (bad);
    bad = json_pack ("{s:i}", "live_bound", 3);
    assert_int_equal (proto_stats_decode (bad, NULL, 0, 0, &d, err, sizeof err), -1);
    assert_non_null (strstr (err, "\"live_bound\" must be an object"));
    json_decref (bad);
    bad = json_pack ("{s:i}", "trace_dropped", -3);
    assert_int_equal (proto_stats_decode (bad, NULL, 1, 0, &d, err, sizeof err), -1);
    assert_non_null (strstr (err, "\"trace_dropped\""));
    json_decref (bad);
}

/*  The effective rate and the load in STATS: known figures survive the
 *  trip, unknown ones (NaN, "") are left out and decode as unknown; a
 *  figure that is negative, not a number or a kind with other characters
 *  is refused, named. */
static void
test_stats_rate_fields (void **state)
{
    (void) state;
    proto_stats_t s = {.speed_mean = 1,
                       .rate = {.measured = 11.75, .measured_se = 0.25, .predicted = 12,
                                .load_utilization = 0.5, .load_kind = "jobs+steps"}};
    proto_msg_t m;
    decode_ok (proto_stats_encode (PROTO_STATS, &s), &m);
    proto_stats_t d;
    char err[TF_ERRLEN] = "";
    if (proto_stats_decode (m.object, NULL, 0, 0, &d, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_true (d.rate.measured == 11.75 && d.rate.measured_se == 0.25);
    assert_true (d.rate.predicted == 12 && d.rate.load_utilization == 0.5);
    assert_string_equal (d.rate.load_kind, "jobs+steps");
    proto_stats_clear (&d);
    proto_msg_clear (&m);

    s.rate = (proto_rate_stats_t){.measured = NAN, .measured_se = NAN, .predicted = 3,
                                  .load_utilization = 0, .load_kind = "none"};
    decode_ok (proto_stats_encode (PROTO_STATS, &s), &m);
    assert_null (json_object_get (m.object, "compute_measured"));
    assert_null (json_object_get (m.object, "compute_stderr"));
    assert_int_equal (proto_stats_decode (m.object, NULL, 0, 0, &d, err, sizeof err), 0);
    assert_true (isnan (d.rate.measured) && isnan (d.rate.measured_se));
    assert_true (d.rate.predicted == 3 && d.rate.load_utilization == 0);
    assert_string_equal (d.rate.load_kind, "none");
    assert_false (d.has_bound || d.has_live_bound);   /* none sent */
    proto_msg_clear (&m);

    /*  An older node's STATS: none of the keys. */
    json_t *old = json_pack ("{s:i}", "computed", 1);
    assert_int_equal (proto_stats_decode (old, NULL, 0, 0, &d, err, sizeof err), 0);
    assert_true (isnan (d.rate.measured) && isnan (d.rate.predicted)
                 && isnan (d.rate.load_utilization));
    assert_string_equal (d.rate.load_kind, "");
    json_decref (old);

    static const char *const bad[][2] = {
        {"{\"compute_measured\": -1}", "\"compute_measured\""},
        {"{\"compute_stderr\": \"x\"}", "\"compute_stderr\""},
        {"{\"compute_predicted\": -0.5}", "\"compute_predicted\""},
        {"{\"load_utilization\": -0.1}", "\"load_utilization\""},
        {"{\"load_kind\": 3}", "\"load_kind\""},
        {"{\"load_kind\": \"\"}", "\"load_kind\""},
        {"{\"load_kind\": \"Jobs\"}", "\"load_kind\""},
        {"{\"load_kind\": \"jobs;rm\"}", "\"load_kind\""},
        {"{\"load_kind\": \"jobsjobsjobsjobsjobsjobsjobsjobsjobsjobsjobsjobs\"}",
         "\"load_kind\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *o = json_loads (bad[i][0], 0, NULL);
        assert_non_null (o);
        err[0] = '\0';
        if (proto_stats_decode (o, NULL, 0, 0, &d, err, sizeof err) != -1)
            fail_msg ("accepted %s", bad[i][0]);
        if (!strstr (err, bad[i][1]))
            fail_msg ("%s: \"%s\" does not name %s", bad[i][0], err, bad[i][1]);
        json_decref (o);
    }
}

/*  A REPORT's texts against its payload frame: lengths that do not add
 *  up to the frame (or no frame, or a frame and no lengths), a trace over
 *  its cap, a NUL byte, a length that is not a count: each refused. */
static void
report_texts_refused (const char *stats, const char *payload, size_t len,
                      const char *why)
{
    json_error_t jerr;
    json_t *body = json_loads (stats, 0, &jerr);
    assert_non_null (body);
    zframe_t *frame = payload ? zframe_new (payload, len) : NULL;
    proto_stats_t d;
    char err[TF_ERRLEN] = "";
    assert_int_equal (proto_stats_decode (body, frame, 1, 0, &d, err, sizeof err), -1);
    if (!strstr (err, why))
        fail_msg ("error \"%s\" does not mention \"%s\"", err, why);
    assert_null (d.samples_csv);
    assert_null (d.trace_csv);
    zframe_destroy (&frame);
    json_decref (body);
}

static void
test_report_texts_are_checked (void **state)
{
    (void) state;
    report_texts_refused ("{\"samples_bytes\": 3}", "abcd", 4, "add up to");
    report_texts_refused ("{\"samples_bytes\": 3, \"trace_bytes\": 2}", "abcd", 4,
                          "(3 and 2)");
    report_texts_refused ("{\"samples_bytes\": 3}", NULL, 0, "payload frame's 0 bytes");
    report_texts_refused ("{}", "abcd", 4, "add up to");
    report_texts_refused ("{\"samples_bytes\": 4}", "ab\0d", 4, "NUL byte");
    report_texts_refused ("{\"samples_bytes\": \"4\"}", "abcd", 4, "\"samples_bytes\"");
    report_texts_refused ("{\"trace_bytes\": -1}", "", 0, "\"trace_bytes\"");
    char big[64];
    snprintf (big, sizeof big, "{\"trace_bytes\": %zu}", (size_t) TRACE_MAX_TEXT + 1);
    report_texts_refused (big, "", 0, "at most");
    /*  Both, split where the lengths say; either alone; neither. */
    json_t *body = json_pack ("{s:i, s:i}", "samples_bytes", 2, "trace_bytes", 3);
    zframe_t *frame = zframe_new ("t0xyz", 5);
    proto_stats_t d;
    char err[TF_ERRLEN] = "";
    if (proto_stats_decode (body, frame, 1, 0, &d, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_string_equal (d.samples_csv, "t0");
    assert_string_equal (d.trace_csv, "xyz");
    proto_stats_clear (&d);
    json_decref (body);
    body = json_pack ("{s:i}", "trace_bytes", 5);
    assert_int_equal (proto_stats_decode (body, frame, 1, 0, &d, err, sizeof err), 0);
    assert_null (d.samples_csv);
    assert_string_equal (d.trace_csv, "t0xyz");
    proto_stats_clear (&d);
    json_decref (body);
    zframe_destroy (&frame);
    body = json_object ();
    assert_int_equal (proto_stats_decode (body, NULL, 1, 0, &d, err, sizeof err), 0);
    assert_null (d.samples_csv);
    assert_null (d.trace_csv);
    json_decref (body);
}

/*  What a writer writes: its text each time, or (flaky) one byte more
 *  from its third call on (the second pass, when it writes both texts),
 *  or (failing) nothing and an error. */
typedef struct {
    const char *text;
    int calls, flaky, failing;
    proto_stats_t *stats;    /* if set: 5 us more observe_cpu_us a call */
} writer_t;

static int
test_writer (FILE *out, void *arg)
{
    writer_t *w = arg;
    w->calls++;
    if (w->stats)
        w->stats->observe_cpu_us += 5;
    if (w->failing)
        return -1;
    if (fputs (w->text, out) < 0)
        return -1;
    return w->flaky && w->calls > 2 ? fputs ("!", out) < 0 : 0;
}

/*  The encoder calls a writer twice, measuring and then filling the
 *  frame, before the rest of the message (what it adds to the figures is
 *  sent), and the texts come back whole; a writer that fails, or writes
 *  more the second time, leaves the texts out rather than sending a frame
 *  that does not match its lengths. */
static void
test_report_writers (void **state)
{
    (void) state;
    writer_t w = {.text = "t0,t1\n1,2\n"};
    proto_stats_t s = {.write_samples = test_writer, .write_trace = test_writer,
                       .write_arg = &w, .trace_end = 1, .observe_cpu_us = 100};
    w.stats = &s;
    proto_msg_t m;
    decode_ok (proto_stats_encode (PROTO_REPORT, &s), &m);
    assert_int_equal (w.calls, 4);
    /*  What the writers added is in the message they are part of. */
    assert_int_equal (json_integer_value (json_object_get (m.object, "observe_cpu_us")), 120);
    proto_stats_t d;
    char err[TF_ERRLEN] = "";
    if (proto_stats_decode (m.object, m.payload, 1, 0, &d, err, sizeof err) != 0)
        fail_msg ("%s", err);
    assert_string_equal (d.samples_csv, w.text);
    assert_string_equal (d.trace_csv, w.text);
    assert_true (d.trace_end == 1);
    proto_stats_clear (&d);
    proto_msg_clear (&m);
    for (int bad = 0; bad < 2; bad++) {
        writer_t b = {.text = "t0,t1\n", .flaky = !bad, .failing = bad};
        s.write_arg = &b;
        decode_ok (proto_stats_encode (PROTO_REPORT, &s), &m);
        assert_null (m.payload);
        assert_null (json_object_get (m.object, "samples_bytes"));
        assert_null (json_object_get (m.object, "trace_bytes"));
        assert_non_null (json_object_get (m.object, "trace_end"));
        assert_int_equal (proto_stats_decode (m.object, m.payload, 1, 0, &d, err, sizeof err),
                          0);
        assert_null (d.samples_csv);
        proto_stats_clear (&d);
        proto_msg_clear (&m);
    }
}

static void
test_malformed_fields_are_refused (void **state)
{
    (void) state;
    refused (raw (PROTO_VERSION, PROTO_REQUEST, "{}", NULL), "\"n\"");
    refused (raw (PROTO_VERSION, PROTO_REQUEST, "{\"n\":0}", NULL), "positive");
    refused (raw (PROTO_VERSION, PROTO_REQUEST, "{\"n\":-3}", NULL), "\"n\"");
    refused (raw (PROTO_VERSION, PROTO_REQUEST, "{\"n\":\"3\"}", NULL), "\"n\"");
    refused (raw (PROTO_VERSION, PROTO_REQUEST, "{\"n\":1,\"m\":2}", NULL), "unexpected field \"m\"");
    refused (raw (PROTO_VERSION, PROTO_ACK, "{\"task\":1}", NULL), "\"index\"");
    refused (raw (PROTO_VERSION, PROTO_HELLO, "{\"name\":3,\"pid\":1,\"version\":1}", NULL), "\"name\"");
    refused (raw (PROTO_VERSION, PROTO_CONFIG, "{\"config\":[]}", NULL), "\"config\"");
    refused (raw (PROTO_VERSION, PROTO_STATS, "{\"stats\":1}", NULL), "\"stats\"");
    refused (raw (PROTO_VERSION, PROTO_STOP, "{\"now\":1}", NULL), "unexpected field");
    refused (raw (PROTO_VERSION, PROTO_START, "{\"parent\":\"\"}", NULL), "\"mode\"");
    refused (raw (PROTO_VERSION, PROTO_START, "{\"parent\":\"\",\"mode\":\"x\"}", NULL), "mode must");
    refused (raw (PROTO_VERSION, PROTO_LOST, "{\"peer\":\"a\"}", NULL), "\"why\"");
    refused (raw (PROTO_VERSION, PROTO_LOST, "{\"peer\":1,\"why\":\"x\"}", NULL), "\"peer\"");
    refused (raw (PROTO_VERSION, PROTO_BEAT, "{\"now\":1}", NULL), "unexpected field");
    refused (raw (PROTO_VERSION, PROTO_RECLAIM, "{\"n\":1}", NULL), "\"dropped\"");
    refused (raw (PROTO_VERSION, PROTO_RECLAIM, "{\"n\":-1,\"dropped\":0}", NULL),
             "\"n\"");
    refused (raw (PROTO_VERSION, PROTO_ATTACH, "{\"node\":1,\"index\":3}", NULL),
             "\"node\" must be an object");
    refused (raw (PROTO_VERSION, PROTO_ATTACH, "{\"node\":{},\"index\":99999999}", NULL),
             "\"index\"");
    refused (raw (PROTO_VERSION, PROTO_ATTACH, "{\"node\":{},\"index\":1,\"key\":\"x\"}",
                  NULL), "CURVE key");
    refused (raw (PROTO_VERSION, PROTO_ATTACHED, "{\"name\":\"X\",\"error\":2}", NULL),
             "\"error\"");
    refused (raw (PROTO_VERSION, PROTO_DRAINED, "{}", NULL), "\"peer\"");
    refused (raw (PROTO_VERSION, PROTO_REPARENT, "{\"parent\":\"tcp://h:1\"}", NULL),
             "\"name\"");
    refused (raw (PROTO_VERSION, PROTO_REPARENT, "{\"parent\":\"\",\"name\":\"R\"}", NULL),
             "empty parent");
    refused (raw (PROTO_VERSION, PROTO_REPARENT,
                  "{\"parent\":\"tcp://h:1\",\"name\":\"R\",\"key\":\"x\"}", NULL),
             "CURVE key");
    refused (raw (PROTO_VERSION, PROTO_RECLAIM, "{\"n\":1,\"dropped\":-1}", NULL),
             "\"dropped\"");
    refused (raw (PROTO_VERSION, PROTO_RETURN, "{\"done\":[[1]]}", NULL), "entry 0");
}

/*  ATTACH, ATTACHED, DRAINED and REPARENT: a node joins, a node leaves,
 *  a node moves (docs/adapt.md, "Grow", "Shrink" and "Re-parent"). */
static void
test_join_messages_round_trip (void **state)
{
    (void) state;
    proto_msg_t m;
    json_t *node = json_pack ("{s:s, s:f, s:f}", "name", "X", "compute", 2.0, "link_mbps",
                              5.0);
    decode_ok (proto_attach (node, 7, NULL), &m);
    assert_int_equal (m.command, PROTO_ATTACH);
    assert_int_equal (m.node, 7);
    assert_null (m.text);
    proto_msg_clear (&m);
    const char *key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
    decode_ok (proto_attach (node, 7, key), &m);
    json_decref (node);
    assert_string_equal (m.text, key);
    assert_string_equal (json_string_value (json_object_get (m.object, "name")), "X");
    proto_msg_clear (&m);
    decode_ok (proto_attached ("X", NULL), &m);
    assert_string_equal (m.text, "X");
    assert_null (m.why);
    proto_msg_clear (&m);
    decode_ok (proto_attached ("X", "no vacant child slot is left"), &m);
    assert_string_equal (m.why, "no vacant child slot is left");
    proto_msg_clear (&m);
    decode_ok (proto_drained ("X"), &m);
    assert_int_equal (m.command, PROTO_DRAINED);
    assert_string_equal (m.text, "X");
    proto_msg_clear (&m);
    decode_ok (proto_reparent ("tcp://127.0.0.1:5", "R", NULL), &m);
    assert_int_equal (m.command, PROTO_REPARENT);
    assert_string_equal (m.text, "tcp://127.0.0.1:5");
    assert_string_equal (m.why, "R");
    assert_null (m.key);
    proto_msg_clear (&m);
    decode_ok (proto_reparent ("tcp://127.0.0.1:5", "R", key), &m);
    assert_string_equal (m.key, key);
    proto_msg_clear (&m);
    decode_ok (proto_reclaim (0, 0), &m);   /* a shrink's drain */
    assert_int_equal (m.n, 0);
    proto_msg_clear (&m);
}

/*  RECLAIM and RETURN, the reclaim's exchange (docs/adapt.md). */
static void
test_reclaim_messages_round_trip (void **state)
{
    (void) state;
    proto_msg_t m;
    decode_ok (proto_reclaim (2, 7), &m);
    assert_int_equal (m.command, PROTO_RECLAIM);
    assert_int_equal (m.n, 2);
    assert_int_equal (m.count, 7);
    proto_msg_clear (&m);
    proto_done_t back[2] = {{.task = 40, .node = 3}, {.task = 41, .node = 3}};
    decode_ok (proto_done (PROTO_RETURN, back, 2, NULL), &m);
    assert_int_equal (m.command, PROTO_RETURN);
    assert_int_equal (m.ndone, 2);
    assert_int_equal (m.done[1].task, 41);
    assert_int_equal (m.done[1].node, 3);
    proto_msg_clear (&m);
    /*  A RETURN rides in a child's BATCH like a DONE. */
    zmsg_t *msgs[2] = {proto_request (1), proto_done (PROTO_RETURN, back, 2, NULL)};
    zmsg_t *batch = proto_batch (msgs, 2), *parts[PROTO_MAX_BATCH];
    char err[TF_ERRLEN] = "";
    assert_int_equal (proto_unbatch (&batch, parts, err, sizeof err), 2);
    decode_ok (parts[0], &m);
    proto_msg_clear (&m);
    decode_ok (parts[1], &m);
    assert_int_equal (m.command, PROTO_RETURN);
    proto_msg_clear (&m);
}

/*  CANCEL and BAG_EMPTY, the end-game's (docs/policies.md), and their
 *  refusals. */
static void
test_end_game_messages_round_trip (void **state)
{
    (void) state;
    proto_msg_t m;
    decode_ok (proto_cancel (12345678901ULL), &m);
    assert_int_equal (m.command, PROTO_CANCEL);
    assert_int_equal (m.task, 12345678901ULL);
    proto_msg_clear (&m);
    decode_ok (proto_empty (PROTO_BAG_EMPTY), &m);
    assert_int_equal (m.command, PROTO_BAG_EMPTY);
    proto_msg_clear (&m);
    assert_string_equal (proto_command_str (PROTO_CANCEL), "CANCEL");
    assert_string_equal (proto_command_str (PROTO_BAG_EMPTY), "BAG_EMPTY");
    refused (raw (PROTO_VERSION, PROTO_CANCEL, "{}", NULL), "task");
    refused (raw (PROTO_VERSION, PROTO_CANCEL, "{\"task\":-1}", NULL), "task");
    refused (raw (PROTO_VERSION, PROTO_CANCEL, "{\"task\":\"7\"}", NULL), "task");
    refused (raw (PROTO_VERSION, PROTO_CANCEL, "{\"task\":7,\"n\":1}", NULL), "n");
    refused (raw (PROTO_VERSION, PROTO_BAG_EMPTY, "{\"task\":7}", NULL), "task");
}

static void
test_malformed_chunks_are_refused (void **state)
{
    (void) state;
    const char *chunk = "{\"task\":1,\"units\":2,\"bytes\":4,\"index\":%d,\"count\":%d}";
    char body[200];
    snprintf (body, sizeof body, chunk, 2, 2);
    refused (raw (PROTO_VERSION, PROTO_CHUNK, body, "ab"), "index 2 not below count 2");
    snprintf (body, sizeof body, chunk, 0, 0);
    refused (raw (PROTO_VERSION, PROTO_CHUNK, body, "ab"), "not below count 0");
    snprintf (body, sizeof body, chunk, 0, 1);
    refused (raw (PROTO_VERSION, PROTO_CHUNK, body, "abcdefgh"), "exceeds");
    refused (raw (PROTO_VERSION, PROTO_CHUNK,
                  "{\"task\":1,\"units\":0,\"bytes\":4,\"index\":0,\"count\":1}", "ab"),
             "\"units\"");
    refused (raw (PROTO_VERSION, PROTO_CHUNK,
                  "{\"task\":1,\"units\":1e400,\"bytes\":4,\"index\":0,\"count\":1}",
                  "ab"), "not a JSON object");
    refused (raw (PROTO_VERSION, PROTO_CHUNK, "{\"task\":1,\"units\":1,\"bytes\":9223372036854775807,"
                  "\"index\":0,\"count\":2}", "ab"), "\"bytes\"");
    snprintf (body, sizeof body, "{\"task\":1,\"units\":1,\"bytes\":%llu,\"index\":0,"
              "\"count\":1}", (unsigned long long) PROTO_MAX_TASK_BYTES + 1);
    refused (raw (PROTO_VERSION, PROTO_CHUNK, body, "ab"), "\"bytes\"");
}

static void
test_malformed_completions_bounds_and_phases_are_refused (void **state)
{
    (void) state;
    refused (raw (PROTO_VERSION, PROTO_DONE, "{\"done\":[[1]]}", NULL), "entry 0");
    refused (raw (PROTO_VERSION, PROTO_DONE, "{\"done\":[[1,2],[3,-1]]}", NULL), "entry 1");
    refused (raw (PROTO_VERSION, PROTO_DONE, "{\"done\":{}}", NULL), "array");
    refused (raw (PROTO_VERSION, PROTO_RECORDED, "{\"done\":[[1,2],[3,-1]]}", NULL),
             "RECORDED: entry 1");
    refused (raw (PROTO_VERSION, PROTO_RECORDED, "{\"done\":[], \"x\":1}", NULL), "\"x\"");
    {
        /*  At most PROTO_MAX_DONE records in one message. */
        json_t *many = json_array ();
        for (int i = 0; i <= PROTO_MAX_DONE; i++)
            json_array_append_new (many, json_pack ("[i,i]", i, 0));
        json_t *big = json_pack ("{s:o}", "done", many);
        char *text = json_dumps (big, JSON_COMPACT);
        refused (raw (PROTO_VERSION, PROTO_RECORDED, text, NULL), "at most 4096");
        free (text);
        json_decref (big);
    }
    refused (raw (PROTO_VERSION, PROTO_SUBTREE, "{\"bounds\":{\"multi\":-1}}", NULL), "\"multi\"");
    refused (raw (PROTO_VERSION, PROTO_SUBTREE, "{\"bounds\":{\"multi\":\"x\"}}", NULL), "finite");
    refused (raw (PROTO_VERSION, PROTO_SUBTREE, "{\"bounds\":[]}", NULL), "object");
    refused (raw (PROTO_VERSION, PROTO_SUBTREE, "{}", NULL), "object");
#define SUBTREE_OK "\"bounds\":{\"multi\":1,\"single\":1,\"bwc\":1}"
    refused (raw (PROTO_VERSION, PROTO_SUBTREE, "{" SUBTREE_OK ",\"compute\":-1}", NULL),
             "compute");
    refused (raw (PROTO_VERSION, PROTO_SUBTREE, "{" SUBTREE_OK ",\"compute\":\"x\"}", NULL),
             "compute");
    refused (raw (PROTO_VERSION, PROTO_SUBTREE, "{" SUBTREE_OK ",\"ir_recv\":-0.5}", NULL),
             "ir_recv");
    refused (raw (PROTO_VERSION, PROTO_SUBTREE, "{" SUBTREE_OK ",\"ir_recv\":null}", NULL),
             "ir_recv");
    refused (raw (PROTO_VERSION, PROTO_SUBTREE, "{" SUBTREE_OK ",\"compute\":1e999}", NULL),
             "SUBTREE");
#undef SUBTREE_OK
    refused (raw (PROTO_VERSION, PROTO_MEASURE,
                  "{\"phase\":1,\"seconds\":1,\"warmup\":2,\"streams\":[]}", NULL),
             "warmup < seconds");
    refused (raw (PROTO_VERSION, PROTO_MEASURE,
                  "{\"phase\":1,\"seconds\":1,\"warmup\":0,\"streams\":[1]}", NULL),
             "streams[0]");
#define MEASURE_OK "\"phase\":1,\"seconds\":1,\"warmup\":0,\"streams\":[]"
    refused (raw (PROTO_VERSION, PROTO_MEASURE, "{" MEASURE_OK ",\"idle\":1}", NULL),
             "\"idle\" must be true or false");
    refused (raw (PROTO_VERSION, PROTO_MEASURE, "{" MEASURE_OK ",\"idle\":\"yes\"}", NULL),
             "\"idle\" must be true or false");
    refused (raw (PROTO_VERSION, PROTO_MEASURE, "{" MEASURE_OK ",\"idle\":null}", NULL),
             "\"idle\" must be true or false");
    refused (raw (PROTO_VERSION, PROTO_MEASURE, "{" MEASURE_OK ",\"idle\":true,\"x\":1}",
                  NULL), "\"x\"");
#undef MEASURE_OK
    refused (raw (PROTO_VERSION, PROTO_MEASURED,
                  "{\"phase\":1,\"seconds\":1,\"units_per_s\":-1,\"recv_mbps\":0,"
                  "\"send_mbps\":{}}", NULL), "\"units_per_s\"");
}

/*  Sizes beyond the limits: a peer's body over PROTO_MAX_PEER_BODY, a
 *  chunk's payload over PROTO_MAX_CHUNK_BYTES, both refused before use;
 *  a control body of the same size is fine. */
static void
test_sizes_beyond_the_limits_are_refused (void **state)
{
    (void) state;
    size_t big = PROTO_MAX_PEER_BODY + 16;
    char *text = xmalloc (big + 1);
    memset (text, ' ', big);
    memcpy (text, "{\"n\":1", 6);
    memcpy (text + big - 1, "}", 2);
    refused (raw (PROTO_VERSION, PROTO_REQUEST, text, NULL), "exceeds");
    memcpy (text, "{\"x\":1", 6);
    zmsg_t *stop = raw (PROTO_VERSION, PROTO_STOP, text, NULL);
    refused (stop, "unexpected field \"x\"");   /* past the size check */
    free (text);

    zmsg_t *msg = raw (PROTO_VERSION, PROTO_CHUNK, "{\"task\":1,\"units\":1,\"bytes\":1073741824,"
                       "\"index\":0,\"count\":2}", NULL);
    zframe_t *payload = zframe_new (NULL, PROTO_MAX_CHUNK_BYTES + 1);
    zmsg_append (msg, &payload);
    refused (msg, "exceeds");
}

static void
test_command_names (void **state)
{
    (void) state;
    assert_string_equal (proto_command_str (PROTO_CHUNK), "CHUNK");
    assert_string_equal (proto_command_str (0), "?");
    assert_string_equal (proto_command_str (PROTO_COMMAND_END), "?");
}

/*  Command tasks' messages: CHUNK's kind and nodes to avoid, RESULT and
 *  RESULT_ACK, RECORDED's long entries and info, CONFIG's run object. */
static void
test_command_messages_round_trip (void **state)
{
    (void) state;
    proto_msg_t m;
    const uint32_t avoid[2] = {3, 7};
    zframe_t *payload = zframe_new ("TFB1", 4);
    decode_ok (proto_chunk (5, 1, 3ull << 30, 0, 6144, 1, avoid, 2, &payload), &m);
    assert_int_equal (m.kind, 1);
    assert_int_equal (m.navoid, 2);
    assert_true (m.avoid[0] == 3 && m.avoid[1] == 7);
    assert_true (m.bytes == 3ull << 30);   /* a command may exceed 1 GiB */
    proto_msg_clear (&m);

    payload = zframe_new ("out", 3);
    decode_ok (proto_result (9, 4, 1, 300, 2, 3, &payload), &m);
    assert_int_equal (m.command, PROTO_RESULT);
    assert_true (m.task == 9 && m.node == 4 && m.failed == 1 && m.bytes == 300);
    assert_true (m.index == 2 && m.count == 3 && zframe_size (m.payload) == 3);
    proto_msg_clear (&m);
    decode_ok (proto_result_ack (9, 2), &m);
    assert_true (m.command == PROTO_RESULT_ACK && m.task == 9 && m.index == 2);
    proto_msg_clear (&m);

    const proto_done_t done[2] = {{1, 2, 1, 3}, {8, 0, 0, 0}};
    json_t *info = json_pack ("[{s:i}, n]", "exit", 2);
    decode_ok (proto_done (PROTO_RECORDED, done, 2, &info), &m);
    assert_null (info);
    assert_true (m.done[0].failed == 1 && m.done[0].attempts == 3);
    assert_true (m.done[1].failed == 0 && m.done[1].attempts == 0);
    assert_int_equal (json_array_size (m.info), 2);
    proto_msg_clear (&m);

    json_t *config = json_pack ("{s:s}", "name", "x");
    json_t *run = json_pack ("{s:i, s:i, s:f, s:s, s:s}", "commands", 4, "attempts", 1,
                             "input_mb", 0.5, "out", "/o", "journal", "/o/j");
    decode_ok (proto_config (config, run, NULL), &m);
    assert_int_equal (json_integer_value (json_object_get (m.run, "commands")), 4);
    assert_null (m.keys);
    proto_msg_clear (&m);
    json_t *keys = json_pack ("{s:s}", "S1", "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7");
    decode_ok (proto_config (config, run, keys), &m);
    assert_string_equal (json_string_value (json_object_get (m.keys, "S1")),
                         "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7");
    proto_msg_clear (&m);
    json_object_set_new (keys, "S2",
                         json_string ("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf\""));
    refused (proto_config (config, run, keys), "the key of \"S2\" is not a CURVE key");
    json_object_set_new (keys, "S2", json_integer (7));
    refused (proto_config (config, run, keys), "the key of \"S2\" is not a CURVE key");
    json_decref (keys);
    json_decref (config);
    json_decref (run);

}

/*  Refusals: a synthetic chunk over 1 GiB, a bad kind, too many nodes to
 *  avoid, a long DONE entry, info beside DONE, RESULT without its payload,
 *  a failed flag of 2. */
static void
test_malformed_command_messages_are_refused (void **state)
{
    (void) state;
    zmsg_t *raw = proto_raw (PROTO_VERSION, PROTO_CHUNK,
                             "{\"task\":1,\"units\":1,\"bytes\":2147483648,"
                             "\"index\":0,\"count\":4096}", "abcd", 4);
    refused (raw, "bytes");
    json_t *body;
    raw = proto_raw (PROTO_VERSION, PROTO_CHUNK,
                             "{\"task\":1,\"units\":1,\"bytes\":4,\"index\":0,"
                             "\"count\":1,\"kind\":2}", "abcd", 4);
    refused (raw, "kind");
    raw = proto_raw (PROTO_VERSION, PROTO_CHUNK,
                     "{\"task\":1,\"units\":1,\"bytes\":4,\"index\":0,\"count\":1,"
                     "\"kind\":1,\"avoid\":[1,2,3,4,5,6,7,8,9]}", "abcd", 4);
    refused (raw, "avoid");
    body = json_pack ("{s:[[i,i,i,i]]}", "done", 1, 2, 0, 1);
    refused (proto_encode (PROTO_DONE, &body, NULL), "entry 0");
    body = json_pack ("{s:[[i,i]], s:[n]}", "done", 1, 2, "info");
    refused (proto_encode (PROTO_DONE, &body, NULL), "unexpected field \"info\"");
    body = json_pack ("{s:[[i,i]], s:[n,n]}", "done", 1, 2, "info");
    refused (proto_encode (PROTO_RECORDED, &body, NULL), "info");
    body = json_pack ("{s:i, s:i, s:i, s:i, s:i, s:i}", "task", 1, "node", 1, "failed", 0,
                      "bytes", 4, "index", 0, "count", 1);
    refused (proto_encode (PROTO_RESULT, &body, NULL), "frames");
    raw = proto_raw (PROTO_VERSION, PROTO_RESULT,
                     "{\"task\":1,\"node\":1,\"failed\":2,\"bytes\":4,\"index\":0,"
                     "\"count\":1}", "abcd", 4);
    refused (raw, "failed");
}

/*  A child's REQUESTs, ACKs and DONEs of one turn travel as one BATCH:
 *  split back into the very messages, each then decoded as usual. */
static void
test_a_batch_splits_into_its_messages (void **state)
{
    (void) state;
    proto_done_t done[2] = {{.task = 5, .node = 2}, {.task = 9, .node = 3}};
    zmsg_t *msgs[3] = {proto_ack (17, 0), proto_request (2), proto_done (PROTO_DONE, done, 2,
                                                                          NULL)};
    zmsg_t *batch = proto_batch (msgs, 3);
    assert_null (msgs[0]);
    assert_int_equal (zmsg_size (batch), 8);
    zmsg_t *parts[PROTO_MAX_BATCH];
    char err[TF_ERRLEN] = "";
    assert_int_equal (proto_unbatch (&batch, parts, err, sizeof err), 3);
    assert_null (batch);
    proto_msg_t m;
    decode_ok (parts[0], &m);
    assert_int_equal (m.command, PROTO_ACK);
    assert_int_equal (m.task, 17);
    proto_msg_clear (&m);
    decode_ok (parts[1], &m);
    assert_int_equal (m.command, PROTO_REQUEST);
    assert_int_equal (m.n, 2);
    proto_msg_clear (&m);
    decode_ok (parts[2], &m);
    assert_int_equal (m.command, PROTO_DONE);
    assert_int_equal (m.ndone, 2);
    assert_int_equal (m.done[1].task, 9);
    proto_msg_clear (&m);
    /*  Not a batch: left alone. */
    zmsg_t *one = proto_request (1);
    assert_int_equal (proto_unbatch (&one, parts, err, sizeof err), 0);
    assert_non_null (one);
    zmsg_destroy (&one);
    /*  A BATCH is never decoded whole. */
    zmsg_t *two[2] = {proto_request (1), proto_request (1)};
    refused (proto_batch (two, 2), "BATCH: 6 frames");
    refused (raw (PROTO_VERSION, PROTO_BATCH, "{\"n\": 2}", NULL), "proto_unbatch");
}

/*  unbatch refuses, with nothing handed on, a count that is not the
 *  frames', one below 2 or above PROTO_MAX_BATCH, and a part that is not
 *  a REQUEST, ACK or DONE (a CHUNK, another BATCH). */
static void
batch_refused (zmsg_t *msg, const char *why)
{
    zmsg_t *parts[PROTO_MAX_BATCH];
    char err[TF_ERRLEN] = "";
    assert_int_equal (proto_unbatch (&msg, parts, err, sizeof err), -1);
    assert_null (msg);
    if (!strstr (err, why))
        fail_msg ("error \"%s\" does not mention \"%s\"", err, why);
}

static void
test_malformed_batches_are_refused (void **state)
{
    (void) state;
    zmsg_t *b = raw (PROTO_VERSION, PROTO_BATCH, "{\"n\": 3}", NULL);
    zmsg_t *r = proto_request (1), *a = proto_ack (1, 0);
    zframe_t *f;
    while ((f = zmsg_pop (r)))   /* two parts, but it says three */
        zmsg_append (b, &f);
    while ((f = zmsg_pop (a)))
        zmsg_append (b, &f);
    zmsg_destroy (&r);
    zmsg_destroy (&a);
    batch_refused (b, "N messages");
    zmsg_t *one[1] = {proto_request (1)};
    batch_refused (proto_batch (one, 1), "2 <= N");
    zmsg_t *many[PROTO_MAX_BATCH + 1];
    for (int i = 0; i <= PROTO_MAX_BATCH; i++)
        many[i] = proto_request (1);
    batch_refused (proto_batch (many, PROTO_MAX_BATCH + 1), "2 <= N");
    zmsg_t *odd[2] = {proto_request (1), proto_request (1)};
    b = proto_batch (odd, 2);
    zmsg_addstr (b, "extra");
    batch_refused (b, "two frames");
    zmsg_t *chunk[2] = {proto_request (1), raw (PROTO_VERSION, PROTO_CHUNK, "{}", NULL)};
    batch_refused (proto_batch (chunk, 2), "part 1 is not");
    zmsg_t *inner[2] = {proto_request (1), proto_request (1)};
    zmsg_t *nest[2] = {proto_request (1), proto_batch (inner, 2)};
    batch_refused (proto_batch (nest, 2), "N messages");
    b = raw (PROTO_VERSION, PROTO_BATCH, "[2]", NULL);
    batch_refused (b, "body must be");
}

/*  Bodies of any size, around the encoder's 4 KiB one-pass buffer and far
 *  beyond it, come back whole (a CONFIG's); so do a REPORT's samples of
 *  those sizes, from a string or from a writer, in its payload frame. */
static void
test_large_bodies_round_trip (void **state)
{
    (void) state;
    size_t sizes[] = {0, 1, 4000, 4030, 4040, 4050, 4060, 4070, 4080, 4090, 4100, 60000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        char *csv = xmalloc (sizes[k] + 1);
        for (size_t i = 0; i < sizes[k]; i++)
            csv[i] = "a,\"\n\\9"[i % 6];   /* escapes too: \" \n \\ */
        csv[sizes[k]] = '\0';
        proto_msg_t m;
        json_t *config = json_pack ("{s:s}", "text", csv);
        decode_ok (proto_config (config, NULL, NULL), &m);
        assert_string_equal (json_string_value (json_object_get (m.object, "text")), csv);
        proto_msg_clear (&m);
        json_decref (config);
        writer_t w = {.text = csv};
        proto_stats_t from_string = {.samples_csv = csv};
        proto_stats_t from_writer = {.write_samples = test_writer, .write_arg = &w};
        proto_stats_t *ways[2] = {&from_string, &from_writer};
        for (int way = 0; way < 2; way++) {
            decode_ok (proto_stats_encode (PROTO_REPORT, ways[way]), &m);
            proto_stats_t d;
            char err[TF_ERRLEN] = "";
            if (proto_stats_decode (m.object, m.payload, 1, 0, &d, err, sizeof err) != 0)
                fail_msg ("%zu bytes: %s", sizes[k], err);
            assert_string_equal (d.samples_csv, csv);
            assert_null (d.trace_csv);
            proto_stats_clear (&d);
            proto_msg_clear (&m);
        }
        free (csv);
    }
}

/*  A run object with every field, as the controller sends it. */
static proto_run_t
full_run (void)
{
    return (proto_run_t) {.commands = 12, .attempts = 3, .input_mb = 2.5,
                          .out = "/runs/x", .journal = "/runs/x/journal.jsonl",
                          .tasks = "/runs/x/tasks.jsonl", .scratch = "/scratch",
                          .resume = 1, .trace = 1};
}

/*  CONFIG's run object through its encoder, proto_config and the decoder:
 *  every field comes back, the strings the message's own. */
static void
test_run_object_round_trips (void **state)
{
    (void) state;
    char err[TF_ERRLEN] = "";
    proto_run_t in = full_run ();
    json_t *run = proto_run_encode (&in, err, sizeof err);
    assert_non_null (run);
    json_t *config = json_pack ("{s:s}", "name", "x");
    proto_msg_t m;
    decode_ok (proto_config (config, run, NULL), &m);
    const proto_run_t *out = &m.run_fields;
    assert_true (out->commands == 12 && out->attempts == 3 && out->input_mb == 2.5);
    assert_string_equal (out->out, "/runs/x");
    assert_string_equal (out->journal, "/runs/x/journal.jsonl");
    assert_string_equal (out->tasks, "/runs/x/tasks.jsonl");
    assert_string_equal (out->scratch, "/scratch");
    assert_true (out->resume == 1 && out->trace == 1);
    proto_msg_clear (&m);
    json_decref (run);

    /*  The least a run says: synthetic tasks only, no paths. */
    proto_run_t least = {.attempts = 1};
    run = proto_run_encode (&least, err, sizeof err);
    decode_ok (proto_config (config, run, NULL), &m);
    assert_true (m.run_fields.commands == 0 && m.run_fields.attempts == 1);
    assert_null (m.run_fields.out);
    assert_null (m.run_fields.tasks);
    assert_true (m.run_fields.resume == 0 && m.run_fields.trace == 0);
    proto_msg_clear (&m);
    json_decref (run);

    /*  No run at all: nothing decoded. */
    decode_ok (proto_config (config, NULL, NULL), &m);
    assert_null (m.run);
    assert_int_equal (m.run_fields.attempts, 0);
    proto_msg_clear (&m);
    json_decref (config);
}

/*  A CONFIG whose run object is body text, refused with why. */
static void
run_refused (const char *run, const char *why)
{
    char *body = xasprintf ("{\"config\": {}, \"run\": %s}", run);
    refused (raw (PROTO_VERSION, PROTO_CONFIG, body, NULL), why);
    free (body);
    proto_run_t out;
    char err[TF_ERRLEN] = "";
    json_t *o = json_loads (run, 0, NULL);
    assert_int_equal (proto_run_decode (o, &out, err, sizeof err), -1);
    assert_null (out.out);
    json_decref (o);
}

#define RUN_OK "\"commands\": 2, \"attempts\": 3, \"input_mb\": 1, " \
               "\"out\": \"/o\", \"journal\": \"/o/j\""

/*  Every rule of the run object: an unknown key, each field's type and
 *  range, the paths, and the rules across fields. */
static void
test_malformed_run_objects_are_refused (void **state)
{
    (void) state;
    run_refused ("[]", "CONFIG: field \"run\" must be an object");
    run_refused ("{" RUN_OK ", \"colour\": 1}", "CONFIG: run: unexpected field \"colour\"");
    run_refused ("{\"attempts\": 1, \"input_mb\": 0}",
                 "field \"commands\" must be an integer in [0, 100000000]");
    run_refused ("{\"commands\": -1, \"attempts\": 1, \"input_mb\": 0}",
                 "field \"commands\" must be an integer in [0, 100000000]");
    run_refused ("{\"commands\": 100000001, \"attempts\": 1, \"input_mb\": 0}",
                 "\"commands\" must be an integer");
    run_refused ("{\"commands\": 1.0, \"attempts\": 1, \"input_mb\": 0}",
                 "\"commands\" must be an integer");
    run_refused ("{\"commands\": 0, \"attempts\": 0, \"input_mb\": 0}",
                 "field \"attempts\" must be an integer in [1, 100]");
    run_refused ("{\"commands\": 0, \"attempts\": 101, \"input_mb\": 0}",
                 "field \"attempts\" must be an integer in [1, 100]");
    run_refused ("{\"commands\": 0, \"attempts\": 1}",
                 "field \"input_mb\" must be a finite number >= 0");
    run_refused ("{\"commands\": 0, \"attempts\": 1, \"input_mb\": -1}",
                 "field \"input_mb\" must be a finite number >= 0");
    run_refused ("{\"commands\": 0, \"attempts\": 1, \"input_mb\": \"1\"}",
                 "field \"input_mb\" must be a finite number >= 0");
    run_refused ("{\"commands\": 0, \"attempts\": 1, \"input_mb\": 16385}",
                 "field \"input_mb\" must be at most 16384");
    run_refused ("{" RUN_OK ", \"resume\": 1}", "field \"resume\" must be true or false");
    run_refused ("{" RUN_OK ", \"trace\": \"yes\"}", "field \"trace\" must be true or false");
    run_refused ("{\"commands\": 2, \"attempts\": 3, \"input_mb\": 1, \"out\": \"o\", "
                 "\"journal\": \"/o/j\"}",
                 "field \"out\" must be an absolute path of at most 4095 bytes");
    run_refused ("{" RUN_OK ", \"tasks\": 7}", "field \"tasks\" must be an absolute path");
    /*  A NUL inside a path (the wire's parser refuses it first). */
    json_t *nul = json_pack ("{s:i, s:i, s:i, s:o}", "commands", 0, "attempts", 1,
                             "input_mb", 0, "scratch", json_stringn ("/a\0b", 4));
    proto_run_t got;
    char why[TF_ERRLEN] = "";
    assert_int_equal (proto_run_decode (nul, &got, why, sizeof why), -1);
    assert_non_null (strstr (why, "field \"scratch\" must be an absolute path"));
    json_decref (nul);
    run_refused ("{" RUN_OK ", \"tasks\": \"/\"}", "field \"tasks\" must be an absolute path");
    char *longest = xasprintf ("{" RUN_OK ", \"tasks\": \"/%0*d\"}", PROTO_RUN_MAX_PATH - 1, 0);
    char *longer = xasprintf ("{" RUN_OK ", \"tasks\": \"/%0*d\"}", PROTO_RUN_MAX_PATH, 0);
    json_t *o = json_loads (longest, 0, NULL);
    proto_run_t out;
    char err[TF_ERRLEN] = "";
    assert_int_equal (proto_run_decode (o, &out, err, sizeof err), 0);
    assert_int_equal (strlen (out.tasks), PROTO_RUN_MAX_PATH);
    proto_run_clear (&out);
    json_decref (o);
    run_refused (longer, "field \"tasks\" must be an absolute path of at most 4095 bytes");
    free (longest);
    free (longer);
    run_refused ("{\"commands\": 2, \"attempts\": 3, \"input_mb\": 1, \"journal\": \"/j\"}",
                 "CONFIG: run: a run with commands needs \"out\" and \"journal\"");
    run_refused ("{\"commands\": 0, \"attempts\": 3, \"input_mb\": 1, \"resume\": true}",
                 "CONFIG: run: a resumed run needs its \"journal\"");
}

/*  The encoder refuses what the decoder would, with the decoder's
 *  message. */
static void
test_run_encoder_refuses_what_the_decoder_would (void **state)
{
    (void) state;
    char err[TF_ERRLEN] = "";
    proto_run_t run = full_run ();
    run.attempts = PROTO_RUN_MAX_ATTEMPTS + 1;
    assert_null (proto_run_encode (&run, err, sizeof err));
    assert_non_null (strstr (err, "field \"attempts\" must be an integer in [1, 100]"));
    run = full_run ();
    run.out = "relative";
    assert_null (proto_run_encode (&run, err, sizeof err));
    assert_non_null (strstr (err, "field \"out\" must be an absolute path"));
    run = full_run ();
    run.tasks = "/bad\xff";
    assert_null (proto_run_encode (&run, err, sizeof err));
    assert_non_null (strstr (err, "CONFIG: run: cannot encode"));
    run = full_run ();
    run.input_mb = NAN;
    assert_null (proto_run_encode (&run, err, sizeof err));
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_every_encoder_round_trips),
        cmocka_unit_test (test_calibration_messages_round_trip),
        cmocka_unit_test (test_peer_messages_round_trip),
        cmocka_unit_test (test_stats_round_trip_and_refusals),
        cmocka_unit_test (test_stats_rate_fields),
        cmocka_unit_test (test_report_texts_are_checked),
        cmocka_unit_test (test_report_writers),
        cmocka_unit_test (test_large_bodies_round_trip),
        cmocka_unit_test (test_malformed_framing_is_refused),
        cmocka_unit_test (test_malformed_fields_are_refused),
        cmocka_unit_test (test_reclaim_messages_round_trip),
        cmocka_unit_test (test_end_game_messages_round_trip),
        cmocka_unit_test (test_join_messages_round_trip),
        cmocka_unit_test (test_malformed_chunks_are_refused),
        cmocka_unit_test (test_malformed_completions_bounds_and_phases_are_refused),
        cmocka_unit_test (test_sizes_beyond_the_limits_are_refused),
        cmocka_unit_test (test_command_names),
        cmocka_unit_test (test_command_messages_round_trip),
        cmocka_unit_test (test_malformed_command_messages_are_refused),
        cmocka_unit_test (test_a_batch_splits_into_its_messages),
        cmocka_unit_test (test_malformed_batches_are_refused),
        cmocka_unit_test (test_run_object_round_trips),
        cmocka_unit_test (test_malformed_run_objects_are_refused),
        cmocka_unit_test (test_run_encoder_refuses_what_the_decoder_would),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
