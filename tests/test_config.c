/*  test_config — the experiment loader: good configs give the right values
 *  and defaults, config_to_json round-trips, and every broken config in
 *  tests/configs/bad/ fails with a message that starts with its path and
 *  contains the text of its .expect sibling: it fails to load, or it loads
 *  and config_check_emulation refuses it (a run would). Every shipped and
 *  good config passes config_check_emulation.
 *
 *  Run from the repository root, or set TF_SRCDIR to it.
 */
#include "overlay/config.h"
#include "overlay/util.h"

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/*  The corpus must hold at least this many broken configs, so a missing
 *  or emptied directory fails instead of passing vacuously. */
#define MIN_BAD_CONFIGS 24

static const char *
srcdir (void)
{
    const char *dir = getenv ("TF_SRCDIR");
    return dir && *dir ? dir : ".";
}

/*  Load srcdir/relpath or fail the test with the loader's message. */
static config_t *
load (const char *relpath)
{
    char *path = xasprintf ("%s/%s", srcdir (), relpath);
    char err[TF_ERRLEN] = "";
    config_t *config = config_load_file (path, err, sizeof err);
    if (!config)
        fail_msg ("%s", err);
    free (path);
    return config;
}

static const config_node_t *
node_named (const config_t *config, const char *name)
{
    int i = config_find_node (config, name);
    assert_true (i >= 0);
    return &config->nodes[i];
}

/*  Assert that two configs describe the same experiment (path aside). */
static void
assert_configs_equal (const config_t *a, const config_t *b)
{
    assert_string_equal (a->name, b->name);
    assert_true (a->tasks.count == b->tasks.count);
    assert_true (a->tasks.input_mb == b->tasks.input_mb);
    assert_true (a->tasks.units == b->tasks.units);
    assert_string_equal (a->policy, b->policy);
    assert_int_equal (a->platform.mode, b->platform.mode);
    assert_true (a->platform.time_scale == b->platform.time_scale);
    assert_true (a->platform.payload_scale == b->platform.payload_scale);
    assert_int_equal (a->platform.chunk_kib, b->platform.chunk_kib);
    assert_int_equal (a->platform.window, b->platform.window);
    assert_int_equal (a->platform.buffer, b->platform.buffer);
    assert_int_equal (a->platform.matrix_n, b->platform.matrix_n);
    assert_int_equal (a->platform.sample_ms, b->platform.sample_ms);
    assert_int_equal (a->platform.ir_measured, b->platform.ir_measured);
    assert_int_equal (a->platform.adapt, b->platform.adapt);
    assert_int_equal (a->platform.reclaim, b->platform.reclaim);
    assert_int_equal (a->nnodes, b->nnodes);
    assert_int_equal (a->root, b->root);
    for (int i = 0; i < a->nnodes; i++) {
        const config_node_t *x = &a->nodes[i], *y = &b->nodes[i];
        assert_string_equal (x->name, y->name);
        if (x->parent_name || y->parent_name) {
            assert_non_null (x->parent_name);
            assert_non_null (y->parent_name);
            assert_string_equal (x->parent_name, y->parent_name);
        }
        assert_string_equal (x->host, y->host);
        assert_int_equal (x->index, y->index);
        assert_int_equal (x->parent, y->parent);
        assert_int_equal (x->depth, y->depth);
        assert_int_equal (x->nchildren, y->nchildren);
        for (int c = 0; c < x->nchildren; c++)
            assert_int_equal (x->children[c], y->children[c]);
        assert_true (x->compute_rate == y->compute_rate);
        assert_true (x->link_mbps == y->link_mbps);
        assert_true (x->link_idle_mbps == y->link_idle_mbps);
        assert_true (x->send_limit_mbps == y->send_limit_mbps);
        assert_true (x->ir_send == y->ir_send);
        assert_true (x->ir_recv == y->ir_recv);
        assert_true (x->delay_ms == y->delay_ms);
    }
}

static void check_fork7_tree (const config_t *config);

static void
test_fork7_values (void **state)
{
    (void) state;
    config_t *config = load ("configs/fork7.json");
    assert_string_equal (config->name, "fork7");
    assert_true (config->tasks.count == 1000);
    assert_true (config->tasks.input_mb == 2);
    assert_true (config->tasks.units == 5);
    assert_string_equal (config->policy, "ia-multi");
    assert_int_equal (config->platform.mode, PLATFORM_EMULATED);
    assert_true (config->platform.time_scale == 20);
    assert_true (config->platform.payload_scale == 0.01);
    assert_int_equal (config->platform.buffer, 3);
    /* Not in the file: the defaults. */
    assert_int_equal (config->platform.chunk_kib, 512);
    assert_int_equal (config->platform.window, 4);
    assert_int_equal (config->platform.matrix_n, 1024);
    assert_int_equal (config->platform.sample_ms, 100);
    assert_int_equal (config->platform.ir_measured, 0);
    assert_int_equal (config->platform.adapt, 0);
    assert_int_equal (config->platform.reclaim, RECLAIM_GATED);
    check_fork7_tree (config);
    /* 2 MB x 2^20 x 0.01 = 20971.52 bytes, rounded. */
    assert_true (config_task_bytes (config) == 20972);
    config_destroy (&config);
    assert_null (config);
}

/*  fork7's tree: Lab0 and its six children, as the published table says. */
static void
check_fork7_tree (const config_t *config)
{
    assert_int_equal (config->nnodes, 7);
    assert_int_equal (config->root, 0);
    const config_node_t *root = &config->nodes[0];
    assert_string_equal (root->name, "Lab0");
    assert_null (root->parent_name);
    assert_int_equal (root->parent, -1);
    assert_int_equal (root->depth, 0);
    assert_true (root->compute_rate == 9.06);
    assert_true (root->send_limit_mbps == 10.7);
    assert_true (root->link_mbps == 0 && root->ir_send == 0 && root->ir_recv == 0);
    assert_int_equal (root->nchildren, 6);
    const char *order[] = {"Lab3", "Lab4", "Lab5", "Lab6", "SB0", "Tenn"};
    for (int c = 0; c < 6; c++) {
        const config_node_t *child = &config->nodes[root->children[c]];
        assert_string_equal (child->name, order[c]);
        assert_int_equal (child->index, c + 1);
        assert_int_equal (child->parent, 0);
        assert_int_equal (child->depth, 1);
        assert_int_equal (child->nchildren, 0);
        assert_null (child->children);
        assert_string_equal (child->host, "local");
        assert_true (child->send_limit_mbps == 0);
    }
    const config_node_t *lab3 = node_named (config, "Lab3");
    assert_string_equal (lab3->parent_name, "Lab0");
    assert_true (lab3->compute_rate == 23.86);
    assert_true (lab3->link_mbps == 10.8);
    assert_true (lab3->link_idle_mbps == 11.1);
    assert_true (lab3->ir_send == 0.0333);
    assert_true (lab3->ir_recv == 0.0443);
    const config_node_t *tenn = node_named (config, "Tenn");
    assert_true (tenn->compute_rate == 13.23);
    assert_true (tenn->link_mbps == 0.2);
    assert_true (tenn->link_idle_mbps == 0.3);
    assert_true (tenn->ir_recv == 0.13);
    /* SB0's idle link is slower than its busy one in the published data. */
    const config_node_t *sb0 = node_named (config, "SB0");
    assert_true (sb0->link_mbps == 7.73 && sb0->link_idle_mbps == 7.7);
}

static void
test_defaults (void **state)
{
    (void) state;
    config_t *config = load ("tests/configs/good/minimal.json");
    assert_string_equal (config->name, "minimal");
    assert_string_equal (config->policy, "fcfs");
    assert_int_equal (config->platform.mode, PLATFORM_EMULATED);
    assert_true (config->platform.time_scale == 1);
    assert_true (config->platform.payload_scale == 1);
    assert_int_equal (config->platform.chunk_kib, 512);
    assert_int_equal (config->platform.window, 4);
    assert_int_equal (config->platform.buffer, 3);
    assert_int_equal (config->platform.matrix_n, 1024);
    assert_int_equal (config->platform.sample_ms, 100);
    assert_int_equal (config->platform.ir_measured, 0);
    /*  Liveness at time scale 1: a beat a second, lost after ten. */
    assert_true (config_heartbeat_s (config) == 1.0);
    assert_true (config_lost_after_s (config) == 10.0);
    config->platform.time_scale = 20;     /* 50 ms, kept at the floor */
    assert_true (config_heartbeat_s (config) == 0.2);
    config->platform.time_scale = 0.5;    /* 2 s, kept at the ceiling */
    assert_true (config_heartbeat_s (config) == 1.0);
    config->platform.time_scale = 4;
    assert_true (config_heartbeat_s (config) == 0.25);
    assert_int_equal (config->nnodes, 1);
    assert_int_equal (config->root, 0);
    assert_string_equal (config->nodes[0].host, "local");
    assert_true (config->nodes[0].send_limit_mbps == 0);
    assert_int_equal (config->nodes[0].nchildren, 0);
    assert_true (config_task_bytes (config) == 0);
    config_destroy (&config);

    /* Link defaults of a child; the name comes from the origin's basename. */
    const char *text =
        "{\"tasks\": {\"count\": 3, \"input_mb\": 1.5, \"units\": 2},"
        " \"tree\": [{\"name\": \"p\", \"compute\": 1},"
        "            {\"name\": \"c\", \"parent\": \"p\", \"compute\": 2,"
        "             \"link_mbps\": 4}]}";
    char err[TF_ERRLEN] = "";
    config = config_load_string (text, "some/dir/sweep-3.json", err, sizeof err);
    assert_non_null (config);
    assert_string_equal (config->name, "sweep-3");
    assert_string_equal (config->path, "some/dir/sweep-3.json");
    const config_node_t *c = node_named (config, "c");
    assert_true (c->link_mbps == 4);
    assert_true (c->link_idle_mbps == 4);
    assert_true (c->ir_send == 0 && c->ir_recv == 0);
    assert_true (c->send_limit_mbps == 0);
    assert_true (config_task_bytes (config) == 1572864);
    config_destroy (&config);

    config = config_load_string (text, "<controller>", err, sizeof err);
    assert_non_null (config);
    assert_string_equal (config->name, "<controller>");
    config_destroy (&config);
}

static void
test_every_key (void **state)
{
    (void) state;
    config_t *config = load ("tests/configs/good/explicit.json");
    assert_string_equal (config->name, "every-key");
    assert_true (config->tasks.count == 5000);
    assert_true (config->tasks.input_mb == 10.5);
    assert_true (config->tasks.units == 11);
    assert_string_equal (config->policy, "ia-multi");
    assert_int_equal (config->platform.mode, PLATFORM_REAL);
    assert_true (config->platform.time_scale == 1);
    assert_true (config->platform.payload_scale == 1);
    assert_int_equal (config->platform.chunk_kib, 128);
    assert_int_equal (config->platform.window, 8);
    assert_int_equal (config->platform.buffer, 5);
    assert_int_equal (config->platform.matrix_n, 512);
    assert_int_equal (config->platform.sample_ms, 50);
    assert_int_equal (config->platform.ir_measured, 1);
    assert_int_equal (config->platform.adapt, 1);
    assert_int_equal (config->platform.reclaim, RECLAIM_ALWAYS);
    assert_int_equal (config->platform.heartbeat_ms, 300);
    assert_int_equal (config->platform.misses, 7);
    assert_true (config_heartbeat_s (config) == 0.3);
    assert_true (fabs (config_lost_after_s (config) - 2.1) < 1e-9);
    const config_node_t *w1 = node_named (config, "w-1");
    assert_string_equal (w1->host, "198.18.0.2");
    assert_true (w1->compute_rate == 1e-3);
    assert_true (w1->link_mbps == 100);
    assert_true (w1->link_idle_mbps == 125.5);
    assert_true (w1->send_limit_mbps == 50);
    assert_true (w1->ir_send == 0);
    assert_true (w1->ir_recv == 0.1);
    assert_true (w1->delay_ms == 2.5);
    assert_true (node_named (config, "w-2")->delay_ms == 0);
    assert_true (config_task_bytes (config) == 11010048);
    config_destroy (&config);
}

/*  Every form of host loads as written (the default is "local"), and a
 *  node reads it back from the canonical form the controller ships. */
static void
test_hosts (void **state)
{
    (void) state;
    config_t *config = load ("tests/configs/good/hosts.json");
    const char *expect[][2] = {
        {"root", "local"}, {"default", "local"}, {"local", "local"},
        {"address", "127.0.0.2"}, {"v6", "::1"}, {"ssh", "ssh://node-1.example.org"},
        {"ssh-full", "ssh://alice@198.18.0.7:2222"},
        {"ssh-v6", "ssh://bob@[2001:db8::7]:22"}, {"ns", "netns:tb-a"},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        assert_string_equal (node_named (config, expect[i][0])->host, expect[i][1]);
    char *text = config_to_json (config);
    char err[TF_ERRLEN] = "";
    config_t *again = config_load_string (text, "<controller>", err, sizeof err);
    if (!again)
        fail_msg ("%s", err);
    assert_configs_equal (config, again);
    config_destroy (&again);
    free (text);
    config_destroy (&config);
}

static void
test_tree_shape (void **state)
{
    (void) state;
    config_t *config = load ("configs/tree3.json");
    assert_int_equal (config->nnodes, 9);
    assert_int_equal (config->root, 0);
    assert_int_equal (config->nodes[0].nchildren, 3);
    const config_node_t *rack_a = node_named (config, "rackA");
    assert_int_equal (rack_a->depth, 1);
    assert_int_equal (rack_a->nchildren, 3);
    for (int c = 0; c < rack_a->nchildren; c++) {
        const config_node_t *leaf = &config->nodes[rack_a->children[c]];
        assert_int_equal (leaf->parent, rack_a->index);
        assert_int_equal (leaf->depth, 2);
        if (c > 0)
            assert_true (rack_a->children[c] > rack_a->children[c - 1]);
    }
    assert_int_equal (node_named (config, "rackB")->nchildren, 2);
    assert_int_equal (node_named (config, "edge7")->nchildren, 0);
    assert_int_equal (config_find_node (config, "rackb"), -1);
    assert_int_equal (config_find_node (config, "rackB-n"), -1);
    assert_int_equal (config_find_node (config, NULL), -1);
    assert_int_equal (config_find_node (NULL, "head"), -1);
    config_destroy (&config);

    config = load ("configs/chain4.json");
    assert_int_equal (config->nnodes, 4);
    assert_true (config->tasks.count == 100);
    for (int i = 0; i < 4; i++) {
        assert_int_equal (config->nodes[i].depth, i);
        assert_int_equal (config->nodes[i].parent, i - 1);
        assert_int_equal (config->nodes[i].nchildren, i < 3 ? 1 : 0);
    }
    config_destroy (&config);
}

/*  A child listed before its parent still gets the right links. */
static void
test_any_order (void **state)
{
    (void) state;
    const char *text =
        "{\"tasks\": {\"count\": 1, \"input_mb\": 1, \"units\": 1}, \"tree\": ["
        " {\"name\": \"leaf\", \"parent\": \"mid\", \"compute\": 1, \"link_mbps\": 1},"
        " {\"name\": \"mid\", \"parent\": \"top\", \"compute\": 1, \"link_mbps\": 1},"
        " {\"name\": \"top\", \"compute\": 1}]}";
    char err[TF_ERRLEN] = "";
    config_t *config = config_load_string (text, "order.json", err, sizeof err);
    assert_non_null (config);
    assert_int_equal (config->root, 2);
    assert_int_equal (config->nodes[0].depth, 2);
    assert_int_equal (config->nodes[1].depth, 1);
    assert_int_equal (config->nodes[2].nchildren, 1);
    assert_int_equal (config->nodes[2].children[0], 1);
    config_destroy (&config);
}

/*  What ships must run: the examples and the good corpus pass the
 *  emulation check. */
static void
test_shipped_emulate (void **state)
{
    (void) state;
    const char *files[] = {
        "configs/fork7.json", "configs/tree3.json", "configs/chain4.json",
        "configs/real4.json", "tests/configs/good/minimal.json",
        "tests/configs/good/explicit.json", "tests/configs/good/interference.json",
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        config_t *config = load (files[f]);
        char err[TF_ERRLEN] = "";
        if (config_check_emulation (config, err, sizeof err) != 0)
            fail_msg ("%s: %s", files[f], err);
        config_destroy (&config);
    }
}

static void
test_round_trip (void **state)
{
    (void) state;
    const char *files[] = {
        "configs/fork7.json", "configs/tree3.json", "configs/chain4.json",
        "tests/configs/good/minimal.json", "tests/configs/good/explicit.json",
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        config_t *config = load (files[f]);
        char *text = config_to_json (config);
        char err[TF_ERRLEN] = "";
        config_t *again = config_load_string (text, "<controller>", err, sizeof err);
        if (!again)
            fail_msg ("%s: reloading its JSON: %s\n%s", files[f], err, text);
        assert_configs_equal (config, again);
        char *text2 = config_to_json (again);
        assert_string_equal (text, text2);
        /* Every default is explicit. */
        assert_non_null (strstr (text, "\"policy\""));
        assert_non_null (strstr (text, "\"mode\""));
        assert_non_null (strstr (text, "\"matrix_n\""));
        assert_non_null (strstr (text, "\"host\""));
        free (text);
        free (text2);
        config_destroy (&config);
        config_destroy (&again);
    }
}

/*  Reals that need all 17 digits survive the trip exactly. */
static void
test_round_trip_exact (void **state)
{
    (void) state;
    config_t *config = load ("configs/fork7.json");
    config->nodes[1].compute_rate = 0.1 + 0.2;
    config->nodes[1].ir_send = 1.0 / 300.0;   /* 17 digits, and < 1 / 10.7 */
    config->platform.time_scale = 1e-300;
    config_set_policy (config, "ia-single");
    char *text = config_to_json (config);
    char err[TF_ERRLEN] = "";
    config_t *again = config_load_string (text, "<controller>", err, sizeof err);
    assert_non_null (again);
    assert_configs_equal (config, again);
    assert_string_equal (again->policy, "ia-single");
    free (text);
    config_destroy (&config);
    config_destroy (&again);
}

static int
by_name (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

/*  Read the one line of an .expect file, without its newline, or NULL. */
static char *
read_expect (const char *path)
{
    FILE *file = fopen (path, "r");
    if (!file)
        return NULL;
    char line[TF_ERRLEN] = "";
    char *got = fgets (line, sizeof line, file);
    fclose (file);
    line[strcspn (line, "\n")] = '\0';
    return got && *line ? xstrdup (line) : NULL;
}

/*  Check one broken config; return 0 if it fails as expected, else print
 *  why and return 1. */
static int
check_bad (const char *dir, const char *file)
{
    char *path = xasprintf ("%s/%s", dir, file);
    char *expect_path = xasprintf ("%s/%.*s.expect", dir, (int) (strlen (file) - 5),
                                   file);
    char *expect = read_expect (expect_path);
    char err[TF_ERRLEN] = "";
    config_t *config = config_load_file (path, err, sizeof err);
    if (config && config_check_emulation (config, err, sizeof err) != 0)
        config_destroy (&config);
    int bad = 1;
    if (!expect)
        print_error ("%s: missing or empty\n", expect_path);
    else if (config)
        print_error ("%s: loaded, expected an error containing '%s'\n", path, expect);
    else if (strncmp (err, path, strlen (path)) != 0)
        print_error ("%s: message does not start with the path: %s\n", path, err);
    else if (!strstr (err, expect))
        print_error ("%s: expected '%s' in: %s\n", path, expect, err);
    else if (strchr (err, '\n') || strstr (err, "<stream>") || strstr (err, "<string>"))
        print_error ("%s: message is not one clean line: %s\n", path, err);
    else
        bad = 0;
    config_destroy (&config);
    free (expect);
    free (expect_path);
    free (path);
    return bad;
}

static void
test_bad_corpus (void **state)
{
    (void) state;
    char *dir = xasprintf ("%s/tests/configs/bad", srcdir ());
    DIR *d = opendir (dir);
    if (!d)
        fail_msg ("cannot open %s", dir);
    char **files = NULL;
    size_t nfiles = 0;
    struct dirent *entry;
    while ((entry = readdir (d))) {
        size_t len = strlen (entry->d_name);
        if (len > 5 && strcmp (entry->d_name + len - 5, ".json") == 0) {
            files = xrealloc (files, (nfiles + 1) * sizeof *files);
            files[nfiles++] = xstrdup (entry->d_name);
        }
    }
    closedir (d);
    qsort (files, nfiles, sizeof *files, by_name);

    int failures = 0;
    for (size_t i = 0; i < nfiles; i++) {
        failures += check_bad (dir, files[i]);
        free (files[i]);
    }
    free (files);
    free (dir);
    assert_int_equal (failures, 0);
    assert_true (nfiles >= MIN_BAD_CONFIGS);
}

static void
test_missing_file (void **state)
{
    (void) state;
    char err[TF_ERRLEN] = "";
    assert_null (config_load_file ("no/such/dir/exp.json", err, sizeof err));
    assert_string_equal (err,
                         "no/such/dir/exp.json: cannot open: No such file or directory");

    /* A directory opens but cannot be read. */
    assert_null (config_load_file (srcdir (), err, sizeof err));
    assert_true (strncmp (err, srcdir (), strlen (srcdir ())) == 0);
    assert_non_null (strstr (err, "cannot read"));
}

static void
test_string_errors (void **state)
{
    (void) state;
    char err[TF_ERRLEN] = "";
    assert_null (config_load_string ("{\n  \"tasks\": }", "<controller>", err,
                                     sizeof err));
    assert_true (strncmp (err, "<controller>:2:", 15) == 0);

    const char *no_tree = "{\"tasks\": {\"count\": 1, \"input_mb\": 1, \"units\": 1}}";
    assert_null (config_load_string (no_tree, "<controller>", err, sizeof err));
    assert_string_equal (err, "<controller>: missing required key \"tree\"");

    /* A key with a newline and a quote is escaped: one line per message. */
    assert_null (config_load_string ("{\"ta\\\"s\\nks\": 1}", "x.json", err, sizeof err));
    assert_null (strchr (err, '\n'));
    assert_non_null (strstr (err, "x.json: unknown key \"ta\\\"s\\x0aks\""));

    /* A short buffer truncates; a NULL one is allowed. */
    char small[12];
    memset (small, 'x', sizeof small);
    assert_null (config_load_string ("[]", "x.json", small, sizeof small));
    assert_string_equal (small, "x.json: exp");
    assert_null (config_load_string ("[]", "x.json", NULL, 0));
}

/*  A long chain loads (the walk is iterative) and a tree larger than
 *  CONFIG_MAX_NODES is refused. */
static void
test_big_trees (void **state)
{
    (void) state;
    int n = 20000;
    size_t size = 100 + (size_t) n * 80, used = 0;
    char *text = xmalloc (size);
    used += snprintf (text + used, size - used,
                      "{\"tasks\": {\"count\": 1, \"input_mb\": 1, \"units\": 1},"
                      " \"tree\": [{\"name\": \"n0\", \"compute\": 1}");
    for (int i = 1; i < n; i++)
        used += snprintf (text + used, size - used,
                          ", {\"name\": \"n%d\", \"parent\": \"n%d\", \"compute\": 1,"
                          " \"link_mbps\": 1}", i, i - 1);
    snprintf (text + used, size - used, "]}");
    char err[TF_ERRLEN] = "";
    config_t *config = config_load_string (text, "chain.json", err, sizeof err);
    assert_non_null (config);
    assert_int_equal (config->nodes[n - 1].depth, n - 1);
    assert_int_equal (config_find_node (config, "n19999"), n - 1);
    config_destroy (&config);
    free (text);

    size = 100 + (CONFIG_MAX_NODES + 1) * 2;
    text = xmalloc (size);
    used = snprintf (text, size,
                     "{\"tasks\": {\"count\": 1, \"input_mb\": 1, \"units\": 1},"
                     " \"tree\": [0");
    for (int i = 1; i <= CONFIG_MAX_NODES; i++)
        used += snprintf (text + used, size - used, ",0");
    snprintf (text + used, size - used, "]}");
    assert_null (config_load_string (text, "huge.json", err, sizeof err));
    assert_string_equal (err,
                         "huge.json: tree: has 65537 nodes, at most 65536 are allowed");
    free (text);
}

static void
test_small_api (void **state)
{
    (void) state;
    assert_string_equal (platform_mode_str (PLATFORM_EMULATED), "emulated");
    assert_string_equal (platform_mode_str (PLATFORM_REAL), "real");
    config_t *config = load ("configs/chain4.json");
    config_set_policy (config, "bwc");
    assert_string_equal (config->policy, "bwc");
    config_set_policy (config, config->policy);
    assert_string_equal (config->policy, "bwc");
    config_destroy (&config);
    config_destroy (&config);
    config_destroy (NULL);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_fork7_values),
        cmocka_unit_test (test_defaults),
        cmocka_unit_test (test_every_key),
        cmocka_unit_test (test_hosts),
        cmocka_unit_test (test_tree_shape),
        cmocka_unit_test (test_any_order),
        cmocka_unit_test (test_round_trip),
        cmocka_unit_test (test_shipped_emulate),
        cmocka_unit_test (test_round_trip_exact),
        cmocka_unit_test (test_bad_corpus),
        cmocka_unit_test (test_missing_file),
        cmocka_unit_test (test_string_errors),
        cmocka_unit_test (test_big_trees),
        cmocka_unit_test (test_small_api),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
