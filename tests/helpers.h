/*  helpers — what the unit tests share: a temporary directory made and
 *  removed, a file read whole or written, a decision core fed an event it
 *  must accept or refuse. Each fails the running cmocka
 *  test (fail_msg) instead of returning an error: a test that cannot set
 *  itself up has failed.
 */
#ifndef TF_TESTS_HELPERS_H
#define TF_TESTS_HELPERS_H

#include <signal.h>
#include <stddef.h>

#include "node/core.h"
#include "overlay/proto_stats.h"

/*  The source tree's root ($TF_SRCDIR, else "."), for configs/. */
const char *test_srcdir (void);

/*  configs/NAME of the source tree, loaded; the test fails if the
 *  loader refuses it. */
config_t *test_config_load (const char *name);

/*  A copy of text with every single quote made a double quote: JSON
 *  written with single quotes, for legibility. The caller frees. */
char *test_dequote (const char *text);

/*  A config loaded from text written with single quotes (test_dequote);
 *  the test fails if the loader refuses it. */
config_t *test_config_from (const char *text);

/*  Create a new directory /tmp/NAME.XXXXXX (mkdtemp) and write its path
 *  into dir (len bytes). */
void test_temp_dir (char *dir, size_t len, const char *name);

/*  Remove path and everything under it; a missing path is fine. */
void test_remove_dir (const char *path);

/*  The whole content of the file at path, NUL-terminated, as a new
 *  string the caller frees. Fails the test if it cannot be read. */
char *test_read_file (const char *path);

/*  The signal tests of a starter of processes (test_runner, test_deploy):
 *  TEST_SIGNALS_ARGV prints the child's SigBlk and SigIgn lines of
 *  /proc/self/status. test_signals_disturb blocks SIGUSR1 alone in the
 *  calling thread and ignores SIGUSR2, saving what was there;
 *  test_signals_restore puts it back and says whether the mask was still
 *  SIGUSR1 alone (the starter gave back the caller's mask). */
#define TEST_SIGNALS_ARGV {"grep", "^Sig\\(Blk\\|Ign\\):", "/proc/self/status", NULL}
typedef struct {
    sigset_t mask;
    struct sigaction usr2;
} test_signals_t;
void test_signals_disturb (test_signals_t *saved);
int test_signals_restore (const test_signals_t *saved);

/*  text holds the lines TEST_SIGNALS_ARGV prints: 1 if no signal is
 *  blocked and none ignored but glibc's reserved ones (32 up to SIGRTMIN,
 *  which its sigaction refuses to change, so a process that inherits them
 *  ignored passes them on), else 0. */
int test_signals_clean (const char *text);

/*  Create or overwrite the file at path with text. Fails the test if it
 *  cannot be written. */
void test_write_file (const char *path, const char *text);

/*  A core made from cfg; the test fails if core_new refuses it. */
core_t *test_core_new (const core_cfg_t *cfg);

/*  Feed a core an event it must accept, and return the actions it
 *  produced (*n of them, borrowed until the next event). Fails the test,
 *  naming the event and the core's reason, when it is refused. */
const core_action_t *test_core_feed (core_t *core, core_event_t ev, int *n);

/*  Feed a core an event it must refuse: -1, no actions, one more
 *  malformed, and an error that mentions why. */
void test_core_refuse (core_t *core, core_event_t ev, const char *why);

/*  The first of the n actions of this type, or NULL. */
const core_action_t *test_core_find (const core_action_t *a, int n,
                                     core_action_type_t type);

/*  Decode text as a "stats" object (proto_stats_decode), which must be
 *  refused with an error that names why. */
void test_stats_refused (const char *text, const char *why);

#endif
