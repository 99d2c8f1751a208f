/*  test_journal — the resume journal: records reach the file in batches
 *  (a full batch, the oldest record's age, flush, close) and each batch is
 *  synced once; a reader sees whole lines only; a final line torn by a
 *  crash is ignored at load and cut off at the next open; a malformed
 *  complete line is an error naming path:line; limits hold on both sides.
 *  Each test has its own temporary directory.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "overlay/journal.h"
#include "overlay/util.h"
#include "tests/helpers.h"

typedef struct {
    char dir[64];
    char *path;
    char err[TF_ERRLEN];
    journal_t *journal;
    size_t seen;             /* records the load callback was given */
    size_t refuse_at;        /* the callback refuses this line (0: none) */
    int in_order;            /* every record's "n" was its line */
} fixture_t;

static int
setup (void **state)
{
    fixture_t *f = xcalloc (1, sizeof *f);
    test_temp_dir (f->dir, sizeof f->dir, "test_journal");
    f->path = xasprintf ("%s/journal.jsonl", f->dir);
    f->in_order = 1;
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    journal_close (&f->journal, NULL, 0);
    assert_null (f->journal);
    test_remove_dir (f->dir);
    free (f->path);
    free (f);
    return 0;
}

/*  The file's whole content as another reader sees it, "" when there is
 *  no file (a new string). */
static char *
file_text (const char *path)
{
    return access (path, F_OK) == 0 ? test_read_file (path) : xstrdup ("");
}

static void
expect_file (const char *path, const char *want)
{
    char *text = file_text (path);
    assert_string_equal (text, want);
    free (text);
}

static void
open_journal (fixture_t *f, size_t batch, double max_delay_s)
{
    f->journal = journal_open (f->path, batch, max_delay_s, f->err, sizeof f->err);
    if (!f->journal)
        fail_msg ("journal_open: %s", f->err);
}

/*  Append {"n": n} at time now; it must succeed. */
static void
append_n (fixture_t *f, int n, double now)
{
    json_t *record = json_pack ("{s:i}", "n", n);
    if (journal_append (f->journal, record, now, f->err, sizeof f->err) < 0)
        fail_msg ("journal_append: %s", f->err);
    json_decref (record);
}

static int
count_record (json_t *record, unsigned line, void *arg)
{
    fixture_t *f = arg;
    f->seen++;
    json_t *n = json_object_get (record, "n");
    if (n && json_integer_value (n) != (json_int_t) line)
        f->in_order = 0;
    return line == f->refuse_at ? -1 : 0;
}

/*  Load the fixture's journal; return journal_load's result. */
static int
load (fixture_t *f, unsigned *torn)
{
    f->seen = 0;
    f->err[0] = '\0';
    return journal_load (f->path, count_record, f, torn, f->err, sizeof f->err);
}

static void
test_open_creates_the_file_0644 (void **state)
{
    fixture_t *f = *state;
    mode_t old = umask (0);
    open_journal (f, 1, 1);
    umask (old);
    struct stat st;
    assert_int_equal (stat (f->path, &st), 0);
    assert_int_equal (st.st_mode & 07777, 0644);
    assert_int_equal (st.st_size, 0);
}

static void
test_a_full_batch_is_written_and_synced_once (void **state)
{
    fixture_t *f = *state;
    open_journal (f, 3, 100);
    append_n (f, 1, 0);
    append_n (f, 2, 0);
    expect_file (f->path, "");          /* nothing written yet */
    assert_int_equal (journal_syncs (f->journal), 0);
    assert_int_equal (journal_pending (f->journal), 2);
    append_n (f, 3, 0);                 /* the batch is full */
    expect_file (f->path, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
    assert_int_equal (journal_syncs (f->journal), 1);
    assert_int_equal (journal_pending (f->journal), 0);
    append_n (f, 4, 0);
    assert_int_equal (journal_syncs (f->journal), 1);
    assert_int_equal (journal_close (&f->journal, f->err, sizeof f->err), 0);
    assert_null (f->journal);
    expect_file (f->path, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n");
}

static void
test_tick_writes_when_the_oldest_is_due (void **state)
{
    fixture_t *f = *state;
    open_journal (f, 100, 0.5);
    assert_true (journal_next_deadline (f->journal, 10) < 0);
    assert_int_equal (journal_tick (f->journal, 10, f->err, sizeof f->err), 0);
    append_n (f, 1, 10.0);
    assert_true (fabs (journal_next_deadline (f->journal, 10.2) - 0.3) < 1e-9);
    append_n (f, 2, 10.4);   /* the oldest one sets the deadline */
    assert_true (fabs (journal_next_deadline (f->journal, 10.4) - 0.1) < 1e-9);
    assert_int_equal (journal_tick (f->journal, 10.49, f->err, sizeof f->err), 0);
    assert_int_equal (journal_syncs (f->journal), 0);
    expect_file (f->path, "");
    assert_int_equal (journal_tick (f->journal, 10.5 - 1e-10, f->err, sizeof f->err), 0);
    assert_int_equal (journal_syncs (f->journal), 1);
    expect_file (f->path, "{\"n\":1}\n{\"n\":2}\n");
    assert_true (journal_next_deadline (f->journal, 11) < 0);
    append_n (f, 3, 20);
    assert_true (journal_next_deadline (f->journal, 30) == 0);   /* overdue */
    assert_int_equal (journal_flush (f->journal, f->err, sizeof f->err), 0);
    assert_int_equal (journal_syncs (f->journal), 2);
    assert_int_equal (journal_flush (f->journal, f->err, sizeof f->err), 0);
    assert_int_equal (journal_syncs (f->journal), 2);   /* nothing to write */
}

static void
test_append_refuses_what_load_would (void **state)
{
    fixture_t *f = *state;
    open_journal (f, 1, 1);
    json_t *array = json_pack ("[i]", 1);
    assert_int_equal (journal_append (f->journal, array, 0, f->err, sizeof f->err), -1);
    json_decref (array);
    char *want = xasprintf ("%s: a record must be a JSON object", f->path);
    assert_string_equal (f->err, want);
    free (want);
    /*  {"s":"..."} is 8 bytes besides the string: the longest record. */
    char *text = xmalloc (JOURNAL_MAX_LINE);
    memset (text, 'x', JOURNAL_MAX_LINE - 8);
    text[JOURNAL_MAX_LINE - 8] = '\0';
    json_t *record = json_pack ("{s:s}", "s", text);
    assert_int_equal (journal_append (f->journal, record, 0, f->err, sizeof f->err), 0);
    json_decref (record);
    strcat (text, "y");
    record = json_pack ("{s:s}", "s", text);
    assert_int_equal (journal_append (f->journal, record, 0, f->err, sizeof f->err), -1);
    json_decref (record);
    free (text);
    want = xasprintf ("%s: a record of 1048577 bytes, more than the limit of 1048576",
                      f->path);
    assert_string_equal (f->err, want);
    free (want);
    assert_int_equal (journal_close (&f->journal, f->err, sizeof f->err), 0);
    unsigned torn = 9;
    assert_int_equal (load (f, &torn), 0);
    assert_int_equal (f->seen, 1);
    assert_int_equal (torn, 0);
}

static void
test_ten_thousand_records_load_in_order (void **state)
{
    fixture_t *f = *state;
    open_journal (f, 64, 1);
    for (int n = 1; n <= 10000; n++)
        append_n (f, n, n * 1e-3);
    assert_int_equal (journal_syncs (f->journal), 10000 / 64);
    assert_int_equal (journal_close (&f->journal, f->err, sizeof f->err), 0);
    unsigned torn = 9;
    assert_int_equal (load (f, &torn), 0);
    assert_int_equal (f->seen, 10000);
    assert_true (f->in_order);
    assert_int_equal (torn, 0);
}

static void
test_a_missing_journal_is_empty (void **state)
{
    fixture_t *f = *state;
    unsigned torn = 9;
    assert_int_equal (load (f, &torn), 0);
    assert_int_equal (f->seen, 0);
    assert_int_equal (torn, 0);
}

/*  A crash mid-write: the last line has no '\n'. It is not a record; the
 *  next open cuts it, so what is appended then starts a line. */
static void
test_a_torn_last_line_is_ignored_then_cut (void **state)
{
    fixture_t *f = *state;
    test_write_file (f->path, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}");
    unsigned torn = 0;
    assert_int_equal (load (f, &torn), 0);
    assert_int_equal (f->seen, 2);
    assert_int_equal (torn, 1);
    assert_int_equal (load (f, NULL), 0);
    open_journal (f, 1, 1);
    expect_file (f->path, "{\"n\":1}\n{\"n\":2}\n");
    append_n (f, 3, 0);
    assert_int_equal (journal_close (&f->journal, f->err, sizeof f->err), 0);
    assert_int_equal (load (f, &torn), 0);
    assert_int_equal (f->seen, 3);
    assert_true (f->in_order);
    assert_int_equal (torn, 0);
    /*  A journal that is nothing but a torn first record. */
    test_write_file (f->path, "{\"n\":");
    open_journal (f, 1, 1);
    expect_file (f->path, "");
}

static void
expect_load_error (fixture_t *f, const char *text, const char *message)
{
    test_write_file (f->path, text);
    assert_int_equal (load (f, NULL), -1);
    char *want = xasprintf ("%s%s", f->path, message);
    assert_string_equal (f->err, want);
    free (want);
}

static void
test_a_malformed_line_names_path_and_line (void **state)
{
    fixture_t *f = *state;
    expect_load_error (f, "{\"n\":1}\nnot json\n{\"n\":3}\n",
                       ":2:3: malformed record: '[' or '{' expected near 'not'");
    expect_load_error (f, "{\"n\":1}\n{\"n\":2}\n\n",
                       ":3:0: malformed record: '[' or '{' expected near end of file");
    expect_load_error (f, "{\"n\":1}\n[2]\n", ":2: a record must be a JSON object");
    /*  Malformed but torn: not a record, not an error. */
    test_write_file (f->path, "{\"n\":1}\nnot json");
    assert_int_equal (load (f, NULL), 0);
    assert_int_equal (f->seen, 1);
}

static void
test_a_line_over_the_limit_is_an_error (void **state)
{
    fixture_t *f = *state;
    char *text = xmalloc (JOURNAL_MAX_LINE + 32);
    strcpy (text, "{\"n\":1}\n");
    memset (text + 8, ' ', JOURNAL_MAX_LINE + 1);
    strcpy (text + 8 + JOURNAL_MAX_LINE + 1, "\n");
    expect_load_error (f, text, ":2: line longer than 1048576 bytes, the limit");
    /*  journal_open will not cut a tail that long: not a journal. */
    text[strlen (text) - 1] = '\0';
    test_write_file (f->path, text);
    free (text);
    assert_null (journal_open (f->path, 1, 1, f->err, sizeof f->err));
    char *want = xasprintf ("%s: not a journal: its last line is longer than 1048576 "
                            "bytes", f->path);
    assert_string_equal (f->err, want);
    free (want);
    struct stat st;
    assert_int_equal (stat (f->path, &st), 0);
    assert_int_equal (st.st_size, 8 + JOURNAL_MAX_LINE + 1);   /* untouched */
}

static void
test_a_refused_record_stops_the_load (void **state)
{
    fixture_t *f = *state;
    f->refuse_at = 2;
    expect_load_error (f, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n", ":2: record refused");
    assert_int_equal (f->seen, 2);
}

static void
test_open_checks_its_arguments_and_the_lock (void **state)
{
    fixture_t *f = *state;
    char *want;
    assert_null (journal_open (f->path, 0, 1, f->err, sizeof f->err));
    want = xasprintf ("%s: batch must be 1 to 100000 records, got 0", f->path);
    assert_string_equal (f->err, want);
    free (want);
    assert_null (journal_open (f->path, JOURNAL_MAX_BATCH + 1, 1, f->err, sizeof f->err));
    assert_null (journal_open (f->path, 1, -1, f->err, sizeof f->err));
    want = xasprintf ("%s: max_delay_s must be 0 to 3600 seconds, got -1", f->path);
    assert_string_equal (f->err, want);
    free (want);
    assert_null (journal_open (f->path, 1, NAN, f->err, sizeof f->err));
    assert_null (journal_open (f->dir, 1, 1, f->err, sizeof f->err));
    want = xasprintf ("%s: cannot open: Is a directory", f->dir);
    assert_string_equal (f->err, want);
    free (want);
    open_journal (f, 1, 1);
    assert_null (journal_open (f->path, 1, 1, f->err, sizeof f->err));
    want = xasprintf ("%s: in use by another process", f->path);
    assert_string_equal (f->err, want);
    free (want);
}

/*  A write that fails half-way (the file size limit here, a full disk in
 *  life) is cut back to the last whole record, and the batch stays
 *  pending until a flush succeeds. */
static void
test_a_failed_write_is_cut_and_kept (void **state)
{
    fixture_t *f = *state;
    open_journal (f, 100, 1);
    append_n (f, 1, 0);
    assert_int_equal (journal_flush (f->journal, f->err, sizeof f->err), 0);
    for (int n = 2; n <= 20; n++)
        append_n (f, n, 0);
    struct rlimit old, small = {.rlim_cur = 50, .rlim_max = RLIM_INFINITY};
    getrlimit (RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    void (*old_handler) (int) = signal (SIGXFSZ, SIG_IGN);
    setrlimit (RLIMIT_FSIZE, &small);
    int rc = journal_flush (f->journal, f->err, sizeof f->err);
    setrlimit (RLIMIT_FSIZE, &old);
    signal (SIGXFSZ, old_handler);
    assert_int_equal (rc, -1);
    char *want = xasprintf ("%s: cannot write: File too large", f->path);
    assert_string_equal (f->err, want);
    free (want);
    expect_file (f->path, "{\"n\":1}\n");
    assert_int_equal (journal_pending (f->journal), 19);
    assert_int_equal (journal_flush (f->journal, f->err, sizeof f->err), 0);
    assert_int_equal (journal_close (&f->journal, f->err, sizeof f->err), 0);
    assert_int_equal (load (f, NULL), 0);
    assert_int_equal (f->seen, 20);
    assert_true (f->in_order);
}

/*  Every test runs in a fresh temporary directory. */
#define WITH_DIR(test) cmocka_unit_test_setup_teardown (test, setup, teardown)

int
main (void)
{
    const struct CMUnitTest tests[] = {
        WITH_DIR (test_open_creates_the_file_0644),
        WITH_DIR (test_a_full_batch_is_written_and_synced_once),
        WITH_DIR (test_tick_writes_when_the_oldest_is_due),
        WITH_DIR (test_append_refuses_what_load_would),
        WITH_DIR (test_ten_thousand_records_load_in_order),
        WITH_DIR (test_a_missing_journal_is_empty),
        WITH_DIR (test_a_torn_last_line_is_ignored_then_cut),
        WITH_DIR (test_a_malformed_line_names_path_and_line),
        WITH_DIR (test_a_line_over_the_limit_is_an_error),
        WITH_DIR (test_a_refused_record_stops_the_load),
        WITH_DIR (test_open_checks_its_arguments_and_the_lock),
        WITH_DIR (test_a_failed_write_is_cut_and_kept),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
