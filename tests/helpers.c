/*  helpers — what the unit tests share. See helpers.h. */
#include "tests/helpers.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "overlay/config.h"
#include "overlay/util.h"

void
test_temp_dir (char *dir, size_t len, const char *name)
{
    if ((size_t) snprintf (dir, len, "/tmp/%s.XXXXXX", name) >= len)
        fail_msg ("temporary directory name too long for %s", name);
    if (!mkdtemp (dir))
        fail_msg ("mkdtemp %s: %s", dir, strerror (errno));
}

void
test_remove_dir (const char *path)
{
    tf_remove_tree (path, 0);
}

char *
test_read_file (const char *path)
{
    FILE *file = fopen (path, "r");
    if (!file)
        fail_msg ("cannot open %s: %s", path, strerror (errno));
    size_t size = 0, cap = 4096;
    char *text = xmalloc (cap);
    for (;;) {
        size += fread (text + size, 1, cap - size - 1, file);
        if (size < cap - 1)
            break;
        cap *= 2;
        text = xrealloc (text, cap);
    }
    int bad = ferror (file);
    fclose (file);
    if (bad)
        fail_msg ("cannot read %s", path);
    text[size] = '\0';
    return text;
}

void
test_write_file (const char *path, const char *text)
{
    FILE *file = fopen (path, "w");
    if (!file)
        fail_msg ("cannot create %s: %s", path, strerror (errno));
    int ok = fputs (text, file) >= 0;
    ok = fclose (file) == 0 && ok;
    if (!ok)
        fail_msg ("cannot write %s", path);
}

const core_action_t *
test_core_feed (core_t *core, core_event_t ev, int *n)
{
    char err[TF_ERRLEN] = "";
    if (core_handle (core, &ev, err, sizeof err) != 0)
        fail_msg ("event %s refused: %s", core_event_str (ev.type), err);
    return core_actions (core, n);
}

void
test_core_refuse (core_t *core, core_event_t ev, const char *why)
{
    char err[TF_ERRLEN] = "";
    uint64_t before = core_stats (core).malformed;
    assert_int_equal (core_handle (core, &ev, err, sizeof err), -1);
    int n;
    core_actions (core, &n);
    assert_int_equal (n, 0);
    assert_int_equal (core_stats (core).malformed, before + 1);
    if (!strstr (err, why))
        fail_msg ("error \"%s\" does not mention \"%s\"", err, why);
}

const core_action_t *
test_core_find (const core_action_t *a, int n, core_action_type_t type)
{
    for (int i = 0; i < n; i++)
        if (a[i].type == type)
            return &a[i];
    return NULL;
}

void
test_stats_refused (const char *text, const char *why)
{
    json_t *o = json_loads (text, 0, NULL);
    if (!o)
        fail_msg ("not JSON: %s", text);
    proto_stats_t d;
    char err[TF_ERRLEN] = "";
    if (proto_stats_decode (o, NULL, 0, 0, &d, err, sizeof err) != -1)
        fail_msg ("accepted %s", text);
    if (!strstr (err, why))
        fail_msg ("%s: \"%s\" does not name %s", text, err, why);
    json_decref (o);
}

const char *
test_srcdir (void)
{
    const char *dir = getenv ("TF_SRCDIR");
    return dir && *dir ? dir : ".";
}

config_t *
test_config_load (const char *name)
{
    char err[TF_ERRLEN], path[4096];
    snprintf (path, sizeof path, "%s/configs/%s", test_srcdir (), name);
    config_t *cfg = config_load_file (path, err, sizeof err);
    if (!cfg)
        fail_msg ("%s", err);
    return cfg;
}

char *
test_dequote (const char *text)
{
    char *json = xstrdup (text);
    for (char *p = json; *p; p++)
        if (*p == '\'')
            *p = '"';
    return json;
}

config_t *
test_config_from (const char *text)
{
    char *json = test_dequote (text);
    char err[TF_ERRLEN] = "";
    config_t *cfg = config_load_string (json, "<test>", err, sizeof err);
    if (!cfg)
        fail_msg ("config: %s\n%s", err, json);
    free (json);
    return cfg;
}

core_t *
test_core_new (const core_cfg_t *cfg)
{
    char err[TF_ERRLEN];
    core_t *core = core_new (cfg, err, sizeof err);
    if (!core)
        fail_msg ("core_new: %s", err);
    return core;
}

void
test_signals_disturb (test_signals_t *saved)
{
    sigset_t usr1;
    sigemptyset (&usr1);
    sigaddset (&usr1, SIGUSR1);
    struct sigaction ign = {.sa_handler = SIG_IGN};
    if (pthread_sigmask (SIG_SETMASK, &usr1, &saved->mask) != 0
        || sigaction (SIGUSR2, &ign, &saved->usr2) != 0)
        fail_msg ("cannot set the test's signals");
}

int
test_signals_restore (const test_signals_t *saved)
{
    sigset_t now;
    pthread_sigmask (SIG_SETMASK, &saved->mask, &now);
    sigaction (SIGUSR2, &saved->usr2, NULL);
    for (int sig = 1; sig < 32; sig++)   /* the standard signals */
        if (sigismember (&now, sig) != (sig == SIGUSR1))
            return 0;
    return 1;
}

int
test_signals_clean (const char *text)
{
    unsigned long long blk, ign, reserved = 0;
    if (!text || sscanf (text, "SigBlk:\t%llx\nSigIgn:\t%llx", &blk, &ign) != 2)
        return 0;
    for (int sig = 32; sig < SIGRTMIN; sig++)
        reserved |= 1ULL << (sig - 1);
    return blk == 0 && (ign & ~reserved) == 0;
}
