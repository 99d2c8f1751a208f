/*  test_trace — a node's span recorder (overlay/trace.h): spans come out
 *  in the order they ended with their task, lane and times; the
 *  recorder keeps at most its cap and counts the rest; an end that does
 *  not match what began is ignored; the REPORT text decodes back to the
 *  same spans, and malformed text is refused with a message naming the
 *  line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "overlay/trace.h"
#include "overlay/util.h"

/*  The trace's text as trace_write writes it (a REPORT's); the caller's. */
static char *
text_of (const trace_t *t)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&text, &len);
    assert_non_null (f);
    assert_int_equal (trace_write (t, f), 0);
    assert_int_equal (fclose (f), 0);
    return text;
}

static void
assert_span (const trace_span_t *s, trace_kind_t kind, uint32_t lane, uint64_t task,
             double start, double end)
{
    assert_int_equal (s->kind, kind);
    assert_int_equal (s->lane, lane);
    assert_int_equal (s->task, task);
    assert_true (s->start == start);
    assert_true (s->end == end);
}

static void
test_spans_come_out_in_the_order_they_ended (void **state)
{
    (void) state;
    trace_t *t = trace_new (10, 2, 3);
    trace_begin (t, TRACE_RECEIVE, 0, 7, 0.5);
    trace_begin (t, TRACE_COMPUTE, 1, 4, 1.0);
    trace_begin (t, TRACE_SEND, 2, 5, 1.25);
    trace_end (t, TRACE_RECEIVE, 0, 7, 1.5);
    trace_end (t, TRACE_SEND, 2, 5, 2.0);
    trace_end (t, TRACE_COMPUTE, 1, 4, 3.0);
    size_t n;
    const trace_span_t *s = trace_spans (t, &n);
    assert_int_equal (n, 3);
    assert_span (&s[0], TRACE_RECEIVE, 0, 7, 0.5, 1.5);
    assert_span (&s[1], TRACE_SEND, 2, 5, 1.25, 2.0);
    assert_span (&s[2], TRACE_COMPUTE, 1, 4, 1.0, 3.0);
    assert_int_equal (trace_dropped (t, NULL), 0);
    trace_destroy (&t);
    assert_null (t);
}

static void
test_an_end_that_does_not_match_is_ignored (void **state)
{
    (void) state;
    trace_t *t = trace_new (10, 1, 1);
    trace_end (t, TRACE_COMPUTE, 0, 1, 1.0);      /* never began */
    trace_begin (t, TRACE_COMPUTE, 0, 2, 1.0);
    trace_end (t, TRACE_COMPUTE, 0, 3, 2.0);      /* another task */
    trace_begin (t, TRACE_SEND, 1, 2, 1.0);       /* lane out of range */
    trace_end (t, TRACE_SEND, 1, 2, 2.0);
    trace_begin (t, TRACE_COMPUTE, 5, 2, 1.0);
    size_t n;
    trace_spans (t, &n);
    assert_int_equal (n, 0);
    trace_begin (t, TRACE_COMPUTE, 0, 9, 4.0);    /* task 2 never ends */
    assert_int_equal (trace_abandoned (t), 1);
    trace_end (t, TRACE_COMPUTE, 0, 9, 3.0);      /* before its start */
    const trace_span_t *s = trace_spans (t, &n);
    assert_int_equal (n, 1);
    assert_span (&s[0], TRACE_COMPUTE, 0, 9, 4.0, 4.0);
    trace_destroy (&t);
}

static void
test_a_full_recorder_keeps_the_oldest_and_counts_the_rest (void **state)
{
    (void) state;
    trace_t *t = trace_new (3, 1, 0);
    for (uint64_t i = 0; i < 10; i++) {
        trace_begin (t, TRACE_COMPUTE, 0, i, (double) i);
        trace_end (t, TRACE_COMPUTE, 0, i, i + 0.5);
    }
    size_t n;
    const trace_span_t *s = trace_spans (t, &n);
    assert_int_equal (n, 3);
    assert_int_equal (s[2].task, 2);
    double first;
    assert_int_equal (trace_dropped (t, &first), 7);
    assert_true (first == 3.0);
    trace_destroy (&t);
}

static void
test_the_cap_is_bounded_however_asked (void **state)
{
    (void) state;
    trace_t *t = trace_new ((size_t) -1, 1, 0);
    for (uint64_t i = 0; i < TRACE_MAX_SPANS + 5; i++) {
        trace_begin (t, TRACE_COMPUTE, 0, i, 1.0);
        trace_end (t, TRACE_COMPUTE, 0, i, 2.0);
    }
    size_t n;
    trace_spans (t, &n);
    assert_int_equal (n, TRACE_MAX_SPANS);
    assert_int_equal (trace_dropped (t, NULL), 5);
    char *text = text_of (t);
    assert_true (strlen (text) <= TRACE_MAX_TEXT);
    trace_span_t *back;
    char err[TF_ERRLEN];
    assert_int_equal (trace_decode (text, 1, 0, &back, &n, err, sizeof err), 0);
    assert_int_equal (n, TRACE_MAX_SPANS);
    free (back);
    free (text);
    trace_destroy (&t);
}

static void
test_the_text_decodes_to_the_same_spans (void **state)
{
    (void) state;
    trace_t *t = trace_new (10, 2, 2);
    trace_begin (t, TRACE_SEND, 1, UINT64_MAX - 1, 0.000001);
    trace_end (t, TRACE_SEND, 1, UINT64_MAX - 1, 12345.678901);
    trace_begin (t, TRACE_COMPUTE, 1, 0, 2.5);
    trace_end (t, TRACE_COMPUTE, 1, 0, 3.25);
    trace_begin (t, TRACE_RECEIVE, 0, 42, 0);
    trace_end (t, TRACE_RECEIVE, 0, 42, 0.125);
    char *text = text_of (t);
    assert_string_equal (text, TRACE_HEADER
                         "s,1,18446744073709551614,0.000001,12345.678901\n"
                         "c,1,0,2.500000,3.250000\n"
                         "r,0,42,0.000000,0.125000\n");
    trace_span_t *back;
    size_t n;
    char err[TF_ERRLEN];
    assert_int_equal (trace_decode (text, 2, 2, &back, &n, err, sizeof err), 0);
    assert_int_equal (n, 3);
    assert_span (&back[0], TRACE_SEND, 1, UINT64_MAX - 1, 0.000001, 12345.678901);
    assert_span (&back[1], TRACE_COMPUTE, 1, 0, 2.5, 3.25);
    assert_span (&back[2], TRACE_RECEIVE, 0, 42, 0, 0.125);
    free (back);
    free (text);
    trace_destroy (&t);
    assert_int_equal (trace_decode (TRACE_HEADER, 1, 0, &back, &n, err, sizeof err), 0);
    assert_int_equal (n, 0);
    free (back);
}

/*  Text that must be refused, and a word of the message. */
static void
expect_refused (const char *text, const char *says)
{
    trace_span_t *spans = (trace_span_t *) 1;
    size_t n = 7;
    char err[TF_ERRLEN] = "";
    assert_int_equal (trace_decode (text, 2, 1, &spans, &n, err, sizeof err), -1);
    assert_null (spans);
    assert_int_equal (n, 0);
    if (!strstr (err, says))
        fail_msg ("\"%s\": message \"%s\" does not say \"%s\"", text, err, says);
}

static void
test_malformed_text_is_refused_with_its_line (void **state)
{
    (void) state;
    expect_refused ("", "line 1: the header");
    expect_refused ("kind,lane\n", "line 1: the header");
    expect_refused (TRACE_HEADER "x,0,1,0,1\n", "line 2: unknown kind");
    expect_refused (TRACE_HEADER "c,0,1,0,1\nc,2,1,0,1\n", "line 3: a compute lane");
    expect_refused (TRACE_HEADER "r,1,1,0,1\n", "receive lane");
    expect_refused (TRACE_HEADER "s,1,1,0,1\n", "send lane");
    expect_refused (TRACE_HEADER "s,-1,1,0,1\n", "send lane");
    expect_refused (TRACE_HEADER "c,0,-1,0,1\n", "task");
    expect_refused (TRACE_HEADER "c,0,99999999999999999999,0,1\n", "task");
    expect_refused (TRACE_HEADER "c,0,1,-1,1\n", "times");
    expect_refused (TRACE_HEADER "c,0,1,0,nan\n", "times");
    expect_refused (TRACE_HEADER "c,0,1,0,1e999\n", "times");
    expect_refused (TRACE_HEADER "c,0,1,0,1,5\n", "times");
    expect_refused (TRACE_HEADER "c,0,1,2,1\n", "end before");
    expect_refused (TRACE_HEADER "c,0,1,0,1", "no newline");
    char line[TRACE_MAX_LINE + 64];
    snprintf (line, sizeof line, "%s" "c,0,1,0.%0*d\n", TRACE_HEADER, TRACE_MAX_LINE, 1);
    expect_refused (line, "too long");
}

static void
test_more_spans_than_the_cap_are_refused (void **state)
{
    (void) state;
    static const char line[] = "c,0,1,0,1\n";
    size_t size = strlen (TRACE_HEADER) + (TRACE_MAX_SPANS + 1) * strlen (line) + 1;
    char *text = malloc (size), *p = text;
    p += sprintf (p, "%s", TRACE_HEADER);
    for (int i = 0; i <= TRACE_MAX_SPANS; i++)
        p += sprintf (p, "%s", line);
    expect_refused (text, "more than");
    free (text);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_spans_come_out_in_the_order_they_ended),
        cmocka_unit_test (test_an_end_that_does_not_match_is_ignored),
        cmocka_unit_test (test_a_full_recorder_keeps_the_oldest_and_counts_the_rest),
        cmocka_unit_test (test_the_cap_is_bounded_however_asked),
        cmocka_unit_test (test_the_text_decodes_to_the_same_spans),
        cmocka_unit_test (test_malformed_text_is_refused_with_its_line),
        cmocka_unit_test (test_more_spans_than_the_cap_are_refused),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
