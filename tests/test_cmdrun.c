/*  test_cmdrun — the command worker (node/cmdrun.h), a real thread running
 *  real processes, driven as the node's runtime drives it.
 *
 *  A worker holds two jobs: one running, the next waiting; a third is
 *  refused. Its commands run one at a time, and the waiting one is staged
 *  and started before the first one's result is reported, so no round
 *  trip through the event loop separates two commands. Outcomes come in the order the jobs were handed over, each
 *  with its task, its result and when its command started. Destroying a
 *  worker that holds two long commands stops both at once, and a signal
 *  caught meanwhile does not cut that short.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "node/cmdrun.h"
#include "overlay/util.h"
#include "tests/helpers.h"

typedef struct {
    char dir[256];
    char *work;
    cmdrun_t *worker;
} fixture_t;

static int
setup (void **state)
{
    fixture_t *f = xcalloc (1, sizeof *f);
    test_temp_dir (f->dir, sizeof f->dir, "test_cmdrun");
    f->work = xasprintf ("%s/work", f->dir);
    f->worker = cmdrun_new (f->work);
    *state = f;
    return 0;
}

static int
teardown (void **state)
{
    fixture_t *f = *state;
    cmdrun_destroy (&f->worker);
    test_remove_dir (f->dir);
    free (f->work);
    free (f);
    return 0;
}

/*  A root's job: task id, a shell command, delivered into DIR/out-ID. */
static json_t *
job_of (const fixture_t *f, uint64_t task, const char *sh)
{
    char *deliver = xasprintf ("%s/out-%llu", f->dir, (unsigned long long) task);
    json_t *job = json_pack ("{s:I, s:{s:s, s:s, s:[]}, s:[], s:s}", "task", (json_int_t) task,
                             "spec", "id", "t", "sh", sh, "inputs", "inputs", "deliver", deliver);
    free (deliver);
    return job;
}

static void
hand (fixture_t *f, uint64_t task, const char *sh)
{
    json_t *job = job_of (f, task, sh);
    assert_int_equal (cmdrun_start (f->worker, job), 0);
    json_decref (job);
}

/*  The next outcome: its task must be want; returns when it started. */
static double
outcome (fixture_t *f, uint64_t want, int want_failed)
{
    uint64_t task = 0, bytes = 0;
    int failed = -1;
    double started = 0;
    json_t *info = NULL;
    assert_int_equal (cmdrun_recv (f->worker, &task, &bytes, &failed, &started, &info), 0);
    assert_int_equal (task, want);
    assert_int_equal (failed, want_failed);
    assert_true (bytes > 0);
    assert_true (started > 0);
    json_decref (info);
    return started;
}

static char *
delivered (const fixture_t *f, uint64_t task, const char *name)
{
    char *path = xasprintf ("%s/out-%llu/%s", f->dir, (unsigned long long) task, name);
    char *text = test_read_file (path);
    free (path);
    return text;
}

/*  The second job's input is a FIFO: staging it blocks until this test
 *  opens the other end. So if the first job's outcome comes before that,
 *  the second job was not begun between the first's end and its report. */
static void
test_next_starts_before_first_is_reported (void **state)
{
    fixture_t *f = *state;
    char *fifo = xasprintf ("%s/fifo", f->dir);
    assert_int_equal (mkfifo (fifo, 0600), 0);
    hand (f, 1, "sleep 0.2; echo one");
    json_t *second = job_of (f, 2, "cat in");
    json_array_append_new (json_object_get (second, "inputs"),
                           json_pack ("{s:s, s:s}", "path", fifo, "name", "in"));
    assert_int_equal (cmdrun_start (f->worker, second), 0);
    json_t *third = job_of (f, 3, "true");
    assert_int_equal (cmdrun_jobs (f->worker), CMDRUN_DEPTH);
    assert_int_equal (cmdrun_start (f->worker, third), -1);   /* full */

    zpoller_t *poller = zpoller_new (cmdrun_sock (f->worker), NULL);
    void *ready = zpoller_wait (poller, 1500);
    zpoller_destroy (&poller);
    int fd = open (fifo, O_WRONLY);   /* (either way: the worker must not hang) */
    if (ready) {
        close (fd);
        fail_msg ("job 1's outcome came before job 2 was begun");
    }
    assert_true (fd >= 0);
    assert_int_equal (write (fd, "two\n", 4), 4);
    close (fd);
    double t1 = outcome (f, 1, 0);
    double t2 = outcome (f, 2, 0);
    assert_true (t2 >= t1 + 0.2);   /* one at a time: the second after the first's sleep */
    char *one = delivered (f, 1, "stdout"), *two = delivered (f, 2, "stdout");
    assert_string_equal (one, "one\n");
    assert_string_equal (two, "two\n");
    free (one);
    free (two);
    assert_int_equal (cmdrun_jobs (f->worker), 0);
    /*  Idle again: a job runs at once, and a failing one says so. */
    assert_int_equal (cmdrun_start (f->worker, third), 0);
    outcome (f, 3, 0);
    hand (f, 4, "exit 3");
    outcome (f, 4, 1);
    json_decref (second);
    json_decref (third);
    free (fifo);
}

static void
test_destroy_stops_both (void **state)
{
    fixture_t *f = *state;
    hand (f, 1, "sleep 30");
    hand (f, 2, "sleep 30");
    usleep (100 * 1000);
    double t0 = tf_now ();
    cmdrun_destroy (&f->worker);
    /*  The grace is RUNNER_KILL_GRACE for each at most; a waiting job that
     *  ran to its end would take 30 s. */
    assert_true (tf_now () - t0 < 10);
}

/*  Signals at the thread that destroys the worker (as SIGTERM comes to a
 *  node stopping): every 0.1 ms until told to stop. */
static volatile int pelting = 1;
static pthread_t destroyer;

static void
on_signal (int sig)
{
    (void) sig;
}

static void *
pelt (void *arg)
{
    (void) arg;
    while (pelting) {
        pthread_kill (destroyer, SIGTERM);
        usleep (100);
    }
    return NULL;
}

/*  A SIGTERM caught while the worker is destroyed (a handler without
 *  SA_RESTART, as czmq's) does not cut the wait for its thread short:
 *  when cmdrun_destroy returns, the worker's loop has returned and it has
 *  killed and reaped its command (its process is gone). */
static void
test_destroy_waits_through_signals (void **state)
{
    fixture_t *f = *state;
    char *pidfile = xasprintf ("%s/pid", f->dir);
    char *sh = xasprintf ("echo $$ > %s.tmp && mv %s.tmp %s && exec sleep 30", pidfile,
                          pidfile, pidfile);
    hand (f, 1, sh);
    struct stat st;
    for (int i = 0; i < 500 && stat (pidfile, &st) != 0; i++)
        usleep (10 * 1000);
    char *text = test_read_file (pidfile);
    pid_t pid = (pid_t) atoi (text);
    assert_true (pid > 0);
    struct sigaction sa = {.sa_handler = on_signal}, old;
    sigaction (SIGTERM, &sa, &old);
    destroyer = pthread_self ();
    pelting = 1;
    pthread_t thread;
    assert_int_equal (pthread_create (&thread, NULL, pelt, NULL), 0);
    usleep (5000);
    assert_int_equal (cmdrun_live (), 1);
    cmdrun_destroy (&f->worker);
    int live = cmdrun_live ();
    int gone = kill (pid, 0) != 0 && errno == ESRCH;
    pelting = 0;
    pthread_join (thread, NULL);
    sigaction (SIGTERM, &old, NULL);
    assert_int_equal (live, 0);   /* the worker's loop has returned */
    assert_true (gone);
    free (text);
    free (sh);
    free (pidfile);
}

int
main (void)
{
    prctl (PR_SET_CHILD_SUBREAPER, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_next_starts_before_first_is_reported, setup,
                                         teardown),
        cmocka_unit_test_setup_teardown (test_destroy_stops_both, setup, teardown),
        cmocka_unit_test_setup_teardown (test_destroy_waits_through_signals, setup,
                                         teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
