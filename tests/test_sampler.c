/*  test_sampler — per-interval rates from cumulative counters, the ring
 *  history that thins itself to stay bounded, and the CSV a run writes from them.
 *
 *  Time is passed in, so every expectation is exact arithmetic on the
 *  contract in node/sampler.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "node/sampler.h"
#include "overlay/util.h"

/*  Times start far from 0, like the monotonic clock's. */
#define T0 5000.0

/*  Record a sample with two children, asserting it is accepted. */
static void
record2 (sampler_t *s, double t, double units, double in, double out0,
         double out1, int busy)
{
    const double out[2] = {out0, out1};
    assert_int_equal (sampler_record (s, t, units, in, out, busy), 0);
}

static void
test_new_and_destroy (void **state)
{
    (void) state;
    sampler_t *s = sampler_new (2, 4);
    assert_non_null (s);
    assert_int_equal (sampler_intervals (s), 0);
    assert_int_equal (sampler_stride (s), 1);
    sampler_interval_t iv;
    assert_int_equal (sampler_interval (s, 0, &iv), -1);
    sampler_destroy (&s);
    assert_null (s);
    sampler_destroy (&s);       /* safe on NULL */
}

/*  Two intervals of different lengths: rates are the counters'
 *  differences over each interval's own length, busy is the flag recorded
 *  at its end (the first sample's flag belongs to no interval). */
static void
test_intervals_and_rates (void **state)
{
    (void) state;
    sampler_t *s = sampler_new (2, 8);
    record2 (s, T0, 10, 1000, 500, 0, 1);
    assert_int_equal (sampler_intervals (s), 0);
    record2 (s, T0 + 0.5, 13, 1000 + 524288, 500 + 262144, 0, 1);
    record2 (s, T0 + 2.5, 14, 1000 + 524288, 500 + 262144, 4000, 0);
    assert_int_equal (sampler_intervals (s), 2);

    sampler_interval_t iv;
    assert_int_equal (sampler_interval (s, 0, &iv), 0);
    assert_true (iv.t0 == T0 && iv.t1 == T0 + 0.5);
    assert_true (iv.units_rate == 6);
    assert_true (iv.recv_rate == 1048576);
    assert_true (iv.send_rate[0] == 524288 && iv.send_rate[1] == 0);
    assert_int_equal (iv.busy, 1);

    assert_int_equal (sampler_interval (s, 1, &iv), 0);
    assert_true (iv.t0 == T0 + 0.5 && iv.t1 == T0 + 2.5);
    assert_true (iv.units_rate == 0.5);
    assert_true (iv.recv_rate == 0);
    assert_true (iv.send_rate[0] == 0 && iv.send_rate[1] == 2000);
    assert_int_equal (iv.busy, 0);

    assert_int_equal (sampler_interval (s, 2, &iv), -1);
    assert_int_equal (sampler_interval (s, -1, &iv), -1);
    sampler_destroy (&s);
}

/*  The busy flag is taken as 0 or 1, whatever true value is passed; and a
 *  first sample recorded busy does not make the first interval busy. */
static void
test_busy_flag (void **state)
{
    (void) state;
    sampler_t *s = sampler_new (0, 4);
    assert_int_equal (sampler_record (s, T0, 0, 0, NULL, 7), 0);
    assert_int_equal (sampler_record (s, T0 + 1, 1, 0, NULL, 0), 0);
    assert_int_equal (sampler_record (s, T0 + 2, 2, 0, NULL, 42), 0);
    sampler_interval_t iv;
    assert_int_equal (sampler_interval (s, 0, &iv), 0);
    assert_int_equal (iv.busy, 0);
    assert_int_equal (sampler_interval (s, 1, &iv), 0);
    assert_int_equal (iv.busy, 1);
    sampler_destroy (&s);
}

/*  A full history keeps every second sample and from then on every second
 *  record: it still spans the whole run, its intervals are sums of the
 *  recorded ones (busy only if all were), and its size never passes the
 *  capacity however long the run. The latest interval stays at full
 *  resolution. */
static void
test_history_thins (void **state)
{
    (void) state;
    sampler_t *s = sampler_new (2, 4);
    /*  Records 0..4 at T0 + i; units i^2 x 10, bytes 100 i, out1 = i; the
     *  interval ending at i busy when i is odd, but the one ending at 3. */
    for (int i = 0; i < 4; i++)
        record2 (s, T0 + i, 10.0 * i * i, 100.0 * i, 0, i, i % 2 && i != 3);
    assert_int_equal (sampler_intervals (s), 3);
    assert_int_equal (sampler_stride (s), 1);

    /*  The fifth record fills it: kept 0, 2 and now 4; stride 2. */
    record2 (s, T0 + 4, 160, 400, 0, 4, 1);
    assert_int_equal (sampler_stride (s), 2);
    assert_int_equal (sampler_intervals (s), 2);
    sampler_interval_t iv;
    assert_int_equal (sampler_interval (s, 0, &iv), 0);
    assert_true (iv.t0 == T0 && iv.t1 == T0 + 2);
    assert_true (iv.units_rate == 40.0 / 2 && iv.recv_rate == 100);
    assert_true (iv.send_rate[0] == 0 && iv.send_rate[1] == 1);
    assert_int_equal (iv.busy, 0);          /* 1 busy, 2 not */
    assert_int_equal (sampler_interval (s, 1, &iv), 0);
    assert_true (iv.t0 == T0 + 2 && iv.t1 == T0 + 4);
    assert_true (iv.units_rate == (160.0 - 40) / 2);
    assert_int_equal (iv.busy, 0);          /* 3 not busy, 4 busy */
    assert_int_equal (sampler_interval (s, 2, &iv), -1);
    assert_int_equal (sampler_last (s, &iv), 0);
    assert_true (iv.t0 == T0 + 3 && iv.t1 == T0 + 4 && iv.busy == 1);
    assert_true (iv.units_rate == 160 - 90);

    /*  Records 5 and 6 make one kept interval, busy since both were. */
    record2 (s, T0 + 5, 250, 500, 0, 5, 1);
    assert_int_equal (sampler_intervals (s), 2);
    record2 (s, T0 + 6, 360, 600, 0, 6, 1);
    assert_int_equal (sampler_intervals (s), 3);
    assert_int_equal (sampler_interval (s, 2, &iv), 0);
    assert_true (iv.t0 == T0 + 4 && iv.t1 == T0 + 6 && iv.busy == 1);
    assert_true (iv.units_rate == (360.0 - 160) / 2);

    /*  A long run: the history spans it all, in at most 4 samples, and
     *  the rates of its intervals add up to the run's totals. */
    for (int i = 7; i < 10000; i++)
        record2 (s, T0 + i, 10.0 * i * i, 100.0 * i, 0, i, 1);
    int k = sampler_intervals (s);
    assert_true (k >= 1 && k <= 3);
    double units = 0, t = T0;
    for (int i = 0; i < k; i++) {
        assert_int_equal (sampler_interval (s, i, &iv), 0);
        assert_true (iv.t0 == t);
        units += iv.units_rate * (iv.t1 - iv.t0);
        t = iv.t1;
    }
    assert_true (fabs (units - 10.0 * (t - T0) * (t - T0)) < 1e-6 * units);
    assert_true (t > T0 + 10000 - 1 - (double) sampler_stride (s));
    assert_int_equal (sampler_last (s, &iv), 0);
    assert_true (iv.t0 == T0 + 9998 && iv.t1 == T0 + 9999);
    sampler_destroy (&s);
}

/*  Time not after the previous sample, counters going backwards and
 *  non-finite values are refused and change nothing: the next good sample
 *  still forms an interval with the last accepted one. Counters standing
 *  still are fine (an idle interval). */
static void
test_bad_samples_refused (void **state)
{
    (void) state;
    sampler_t *s = sampler_new (2, 4);
    record2 (s, T0, 10, 100, 50, 60, 1);
    const double ok[2] = {50, 60}, back[2] = {49, 60}, back1[2] = {50, 59};
    const double inf[2] = {INFINITY, 60};
    sampler_interval_t iv;

    assert_int_equal (sampler_record (s, T0, 11, 100, ok, 1), -1);
    assert_int_equal (sampler_record (s, T0 - 1, 11, 100, ok, 1), -1);
    assert_int_equal (sampler_record (s, NAN, 11, 100, ok, 1), -1);
    assert_int_equal (sampler_record (s, T0 + 1, 9, 100, ok, 1), -1);
    assert_int_equal (sampler_record (s, T0 + 1, 11, 99, ok, 1), -1);
    assert_int_equal (sampler_record (s, T0 + 1, 11, 100, back, 1), -1);
    assert_int_equal (sampler_record (s, T0 + 1, 11, 100, back1, 1), -1);
    assert_int_equal (sampler_record (s, T0 + 1, NAN, 100, ok, 1), -1);
    assert_int_equal (sampler_record (s, T0 + 1, 11, 100, inf, 1), -1);
    assert_int_equal (sampler_intervals (s), 0);
    assert_int_equal (sampler_last (s, &iv), -1);

    assert_int_equal (sampler_record (s, T0 + 2, 10, 100, ok, 0), 0);
    assert_int_equal (sampler_intervals (s), 1);
    assert_int_equal (sampler_interval (s, 0, &iv), 0);
    assert_true (iv.t0 == T0 && iv.t1 == T0 + 2);
    assert_true (iv.units_rate == 0 && iv.recv_rate == 0);
    assert_true (iv.send_rate[0] == 0 && iv.send_rate[1] == 0);
    sampler_destroy (&s);
}

/*  Write s as CSV into a string the caller frees. */
static char *
csv_of (sampler_t *s, const char *const *children, double time_scale,
        double bytes_per_mb)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    assert_non_null (f);
    assert_int_equal (sampler_write_csv (s, f, children, time_scale,
                                         bytes_per_mb), 0);
    fclose (f);
    return text;
}

/*  Time scale 20 and a payload scale of 0.01 (bytes_per_mb = 2^20 x 0.01):
 *  times in platform seconds, rates per platform second in platform MB/s,
 *  9 significant digits. The expected text is worked out by hand:
 *  100 + 1/128 s -> 2000.15625 platform s, 0.5 s -> 10; 3 units / 0.5 s / 20 = 0.3; 524288 bytes / 0.5 s
 *  / 20 / 10485.76 = 5 MB/s; then 1 unit, 1e6 and 100 bytes over 0.75 s
 *  = 15 platform s. The background used 0.25 s of the first 0.5 s
 *  (share 0.5) and none of the next; the effective rate, as given, is
 *  unknown at the first sample (an empty cell), then 6 and 5.5. */
static void
test_csv (void **state)
{
    (void) state;
    const char *const children[] = {"Lab3", "Lab4"};
    double bytes_per_mb = 1048576 * 0.01;
    sampler_t *s = sampler_new (2, 8);

    char *text = csv_of (s, children, 20, bytes_per_mb);
    assert_string_equal (text,
        "t0,t1,busy,units_per_s,recv_mbps,send_mbps_Lab3,send_mbps_Lab4,"
        "load_share,measured_units_per_s\n");
    free (text);

    sampler_set_load (s, 1, NAN);
    record2 (s, 100 + 1.0 / 128, 0, 0, 0, 0, 0);
    sampler_set_load (s, 1.25, 6);
    record2 (s, 100.5 + 1.0 / 128, 3, 524288, 262144, 0, 1);
    sampler_set_load (s, 1.25, 5.5);
    record2 (s, 101.25 + 1.0 / 128, 4, 1524288, 262144, 100, 0);
    text = csv_of (s, children, 20, bytes_per_mb);
    assert_string_equal (text,
        "t0,t1,busy,units_per_s,recv_mbps,send_mbps_Lab3,send_mbps_Lab4,"
        "load_share,measured_units_per_s\n"
        "2000.15625,2010.15625,1,0.3,5,2.5,0,0.5,6\n"
        "2010.15625,2025.15625,0,0.0666666667,6.35782878,0,0.000635782878,0,5.5\n");
    free (text);
    sampler_destroy (&s);

    /*  A leaf: no send columns. */
    s = sampler_new (0, 4);
    assert_int_equal (sampler_record (s, 1, 0, 0, NULL, 1), 0);
    assert_int_equal (sampler_record (s, 2, 5, 1048576, NULL, 1), 0);
    text = csv_of (s, NULL, 1, 1048576);
    assert_string_equal (text, "t0,t1,busy,units_per_s,recv_mbps,load_share,"
                               "measured_units_per_s\n"
                               "1,2,1,5,1,0,\n");
    free (text);
    sampler_destroy (&s);
}

/*  The load columns when the history thins: 6 records 1 s apart into 4
 *  slots thin it once, merging intervals; the background used 0.25 s a
 *  second throughout, so every kept interval, merged or not, has share 0.25; the
 *  rate is the one its last record carried (the record's index + 10). */
static void
test_load_columns_when_thinned (void **state)
{
    (void) state;
    sampler_t *s = sampler_new (0, 4);
    for (int i = 0; i < 6; i++) {
        sampler_set_load (s, 0.25 * i, 10 + i);
        assert_int_equal (sampler_record (s, i, i, 0, NULL, 1), 0);
    }
    int n = sampler_intervals (s);
    assert_true (n >= 2);
    for (int i = 0; i < n; i++) {
        sampler_interval_t iv;
        assert_int_equal (sampler_interval (s, i, &iv), 0);
        assert_true (fabs (iv.load_share - 0.25) < 1e-12);
        assert_true (iv.measured == 10 + iv.t1);
    }
    sampler_set_load (s, NAN, 1);   /* a non-finite background keeps the last */
    assert_int_equal (sampler_record (s, 6, 6, 0, NULL, 1), 0);
    sampler_interval_t last;
    assert_int_equal (sampler_last (s, &last), 0);
    assert_true (last.load_share == 0 && last.measured == 1);
    sampler_destroy (&s);
}

/*  A full disk is reported. */
static void
test_csv_write_error (void **state)
{
    (void) state;
    FILE *f = fopen ("/dev/full", "w");
    if (!f)
        skip ();
    const char *const children[] = {"a"};
    sampler_t *s = sampler_new (1, 4);
    const double out0[1] = {0}, out1[1] = {10};
    assert_int_equal (sampler_record (s, 1, 0, 0, out0, 1), 0);
    assert_int_equal (sampler_record (s, 2, 1, 1, out1, 1), 0);
    assert_int_equal (sampler_write_csv (s, f, children, 1, 1), -1);
    fclose (f);
    sampler_destroy (&s);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_new_and_destroy),
        cmocka_unit_test (test_intervals_and_rates),
        cmocka_unit_test (test_busy_flag),
        cmocka_unit_test (test_history_thins),
        cmocka_unit_test (test_bad_samples_refused),
        cmocka_unit_test (test_csv),
        cmocka_unit_test (test_load_columns_when_thinned),
        cmocka_unit_test (test_csv_write_error),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
