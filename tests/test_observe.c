/*  test_observe — the sampler and online fit of a node, fed on a virtual
 *  clock: samples of a node whose compute rate follows the interference
 *  model give back its C and IRs; intervals the engine was idle in, even
 *  briefly, stay out of the fit; the CSV has a row per interval.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "node/observe.h"

/*  A node with C = 10 units/s, IR_r 0.04, IR_s 0.02 (one child), time
 *  scale 2 and 1 byte per platform MB (so bytes/s = MB/s x 2 here). */
#define C 10.0
#define IRR 0.04
#define IRS 0.02
#define SCALE 2.0
#define BPS 2.0   /* physical bytes/s per platform MB/s: 1 byte per MB x scale 2 */

/*  A node being observed on a virtual clock: time, units done, bytes in
 *  and out so far. */
typedef struct {
    observe_t *o;
    double t, units, in, out;
} run_t;

/*  A fresh observer with its first sample at t = 0. */
static run_t
start (void)
{
    run_t r = {.o = observe_new (1, 1000, 0.1, SCALE, BPS)};
    double zero[2] = {0, 0};
    observe_sample (r.o, 0, 0, 1, zero);
    return r;
}

/*  k intervals of 0.1 s: receive and send rates vary, the compute rate
 *  follows the model exactly (in wall terms: x SCALE). */
static void
feed (run_t *r, int k)
{
    for (int i = 0; i < k; i++) {
        double in = (i % 5) * 2.0, out = (i % 3) * 3.0;   /* platform MB/s */
        r->t += 0.1;
        r->units += C * (1 - IRR * in - IRS * out) * SCALE * 0.1;
        r->in += in * BPS * 0.1;
        r->out += out * BPS * 0.1;
        double observed[2] = {r->in, r->out};
        observe_sample (r->o, r->t, r->units, 1, observed);
    }
}

static void
test_the_fit_recovers_the_model (void **state)
{
    (void) state;
    run_t r = start ();
    const observe_estimates_t *e = observe_estimates (r.o);
    assert_false (e->ok && e->n > 0);
    feed (&r, 60);
    e = observe_estimates (r.o);
    assert_true (e->ok);
    assert_int_equal (e->n, 60);
    if (fabs (e->c - C) > 1e-6 || fabs (e->ir_recv - IRR) > 1e-9
        || fabs (e->ir_send[0] - IRS) > 1e-9)
        fail_msg ("fit C %.9g IR_r %.9g IR_s %.9g", e->c, e->ir_recv, e->ir_send[0]);
    observe_destroy (&r.o);
    assert_null (r.o);
}

static void
test_idle_intervals_stay_out (void **state)
{
    (void) state;
    run_t r = start ();
    feed (&r, 10);
    observe_idle (r.o);            /* a task ended; the next started at once */
    feed (&r, 1);                  /* that interval is not whole */
    assert_int_equal (observe_estimates (r.o)->n, 10);
    double observed[2] = {r.in, r.out};
    observe_sample (r.o, r.t += 0.1, r.units, 0, observed);   /* idle now */
    observe_sample (r.o, r.t += 0.1, r.units, 1, observed);   /* idle at its start */
    assert_int_equal (observe_estimates (r.o)->n, 10);
    assert_int_equal (observe_count (r.o), 10);   /* idle: nothing to solve again */
    feed (&r, 5);
    assert_int_equal (observe_estimates (r.o)->n, 15);
    assert_int_equal (observe_count (r.o), 15);
    assert_true (observe_due (r.o, r.t + 0.1));
    assert_false (observe_due (r.o, r.t + 0.05));

    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    const char *names[1] = {"kid"};
    assert_int_equal (observe_write_csv (r.o, f, names, 1.0), 0);
    fclose (f);
    int lines = 0;
    for (char *p = text; *p; p++)
        lines += *p == '\n';
    assert_int_equal (lines, 1 + 18);   /* header, 18 intervals */
    assert_non_null (strstr (text, "kid"));
    free (text);
    observe_destroy (&r.o);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_the_fit_recovers_the_model),
        cmocka_unit_test (test_idle_intervals_stay_out),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
