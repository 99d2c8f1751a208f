/*  test_slurm — the Slurm allocation (controller/slurm.h) and the srun
 *  step's stdin (overlay/stepin.h): SLURM_JOB_CPUS_PER_NODE read and
 *  refused when malformed or past a limit, scontrol's host list read and
 *  refused, nodes placed round the hosts within their CPUs and refused
 *  past them; each node's block on the step's stdin, its own kept and
 *  the others' skipped, the signal lines, the rank read from
 *  SLURM_PROCID, and every refusal of a broken stream; the tree of
 *  --tree auto.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "controller/slurm.h"
#include "controller/slurm_tree.h"
#include "overlay/config.h"
#include "overlay/stepin.h"
#include "overlay/util.h"

static void
test_cpus (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    int cpus[8];
    assert_int_equal (slurm_cpus_parse ("8(x3),4", cpus, 4, err, sizeof err), 0);
    assert_int_equal (cpus[0], 8);
    assert_int_equal (cpus[2], 8);
    assert_int_equal (cpus[3], 4);
    assert_int_equal (slurm_cpus_parse ("5", cpus, 1, err, sizeof err), 0);
    assert_int_equal (cpus[0], 5);
    const char *bad[] = {"", "0", "x", "8(x3", "8(x0)", "8,,4", "65537", "8(x3)4", "-1",
                         "8(x5)", "2,2,2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (slurm_cpus_parse (bad[i], cpus, 4, err, sizeof err) == 0)
            fail_msg ("accepted \"%s\"", bad[i]);
    assert_int_equal (slurm_cpus_parse ("8(x5)", cpus, 4, err, sizeof err), -1);
    assert_non_null (strstr (err, "more hosts than the 4 of SLURM_JOB_NODELIST"));
    assert_int_equal (slurm_cpus_parse ("8", cpus, 2, err, sizeof err), -1);
    assert_non_null (strstr (err, "names 1 hosts, SLURM_JOB_NODELIST 2"));
}

static void
test_hosts (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    char *hosts[4];
    int n = slurm_hosts_parse ("cn01\ncn02\n\ncn03.cluster\n", hosts, 4, err, sizeof err);
    assert_int_equal (n, 3);
    assert_string_equal (hosts[2], "cn03.cluster");
    for (int i = 0; i < n; i++)
        free (hosts[i]);
    assert_int_equal (slurm_hosts_parse ("", hosts, 4, err, sizeof err), -1);
    assert_int_equal (slurm_hosts_parse ("a\nb c\n", hosts, 4, err, sizeof err), -1);
    assert_non_null (strstr (err, "\"b c\", which is not a host name"));
    assert_int_equal (slurm_hosts_parse ("-oX\n", hosts, 4, err, sizeof err), -1);
    assert_int_equal (slurm_hosts_parse ("a\nb\nc\n", hosts, 2, err, sizeof err), -1);
    assert_non_null (strstr (err, "more than 2 hosts"));
}

static void
test_place (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    char *hosts[] = {"a", "b", "c"};
    int cpus[] = {2, 1, 2};
    slurm_alloc_t *alloc = slurm_alloc_new ("42", hosts, cpus, 3, err, sizeof err);
    assert_non_null (alloc);
    assert_int_equal (slurm_alloc_total_cpus (alloc), 5);
    int want[] = {0, 1, 2, 0, 2};
    for (int i = 0; i < 5; i++)
        assert_int_equal (slurm_alloc_place (alloc, err, sizeof err), want[i]);
    assert_int_equal (slurm_alloc_place (alloc, err, sizeof err), -1);
    assert_non_null (strstr (err, "more tree nodes than the allocation holds: job 42 has "
                             "3 hosts and 5 CPUs, one a node, so 5 nodes at most"));
    slurm_alloc_destroy (&alloc);
    assert_null (alloc);
    int zero[] = {2, 0, 1};
    assert_null (slurm_alloc_new ("42", hosts, zero, 3, err, sizeof err));
    assert_null (slurm_alloc_new ("42", hosts, cpus, 0, err, sizeof err));
}

/*  A stream of three blocks (rank 1 with a certificate; ranks 0 and 2 on
 *  task 0, rank 1 on task 1), the end line and what follows, as a FILE. */
static FILE *
stream (const char *after)
{
    char *b0 = stepin_block (0, 0, "head", "10.0.0.1", NULL);
    char *b1 = stepin_block (1, 1, "w1", NULL, "secret line 1\nsecret line 2\n");
    char *b2 = stepin_block (2, 0, "w2", "10.0.0.2", "other secret\n");
    char *text = xasprintf ("%s%s%s%s\n%s", b0, b1, b2, STEPIN_END, after);
    FILE *fp = tmpfile ();
    assert_non_null (fp);
    fputs (text, fp);
    rewind (fp);
    free (text);
    free (b0);
    free (b1);
    free (b2);
    return fp;
}

static void
test_stepin_read (void **state)
{
    (void) state;
    char err[TF_ERRLEN], line[128];
    stepin_node_t *me = NULL;
    int n = 0;
    FILE *fp = stream (STEPIN_SIGNAL " 1 9\n");
    assert_int_equal (stepin_read (fp, 1, &me, &n, err, sizeof err), 0);
    assert_int_equal (n, 1);
    assert_int_equal (me[0].rank, 1);
    assert_string_equal (me[0].name, "w1");
    assert_string_equal (me[0].bind, "");
    assert_string_equal (me[0].cert, "secret line 1\nsecret line 2\n");
    stepin_nodes_free (&me, n);
    assert_null (me);
    /*  The stream goes on after the end line: the signals. */
    assert_non_null (fgets (line, sizeof line, fp));
    int rank, sig;
    assert_int_equal (stepin_signal_parse (line, &rank, &sig), 0);
    assert_int_equal (rank, 1);
    assert_int_equal (sig, SIGKILL);
    fclose (fp);
    /*  Task 0 starts two nodes: both blocks, in order. */
    fp = stream ("");
    assert_int_equal (stepin_read (fp, 0, &me, &n, err, sizeof err), 0);
    assert_int_equal (n, 2);
    assert_int_equal (me[0].rank, 0);
    assert_string_equal (me[0].name, "head");
    assert_string_equal (me[0].bind, "10.0.0.1");
    assert_null (me[0].cert);
    assert_int_equal (me[1].rank, 2);
    assert_string_equal (me[1].name, "w2");
    assert_string_equal (me[1].bind, "10.0.0.2");
    assert_string_equal (me[1].cert, "other secret\n");
    stepin_nodes_free (&me, n);
    fclose (fp);
}

static void
test_stepin_refusals (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    stepin_node_t *me = NULL;
    int n = 0;
    FILE *fp = stream ("");
    assert_int_equal (stepin_read (fp, 2, &me, &n, err, sizeof err), -1);
    assert_string_equal (err, "no block for this task on stdin");
    assert_null (me);
    fclose (fp);
    const char *cut = STEPIN_RANK " 0 0 a -\n";
    fp = fmemopen ((char *) cut, strlen (cut), "r");
    assert_int_equal (stepin_read (fp, 0, &me, &n, err, sizeof err), -1);
    assert_string_equal (err, "end of stdin before the ranks' end");
    fclose (fp);
    const char *stray = "hello\n" STEPIN_END "\n";
    fp = fmemopen ((char *) stray, strlen (stray), "r");
    assert_int_equal (stepin_read (fp, 0, &me, &n, err, sizeof err), -1);
    assert_string_equal (err, "stdin has a line outside a rank's block");
    fclose (fp);
    char *big = xmalloc (5000);
    memset (big, 'k', 4998);
    big[4998] = '\n';
    big[4999] = '\0';
    char *text = xasprintf (STEPIN_RANK " 0 0 a -\n%s" STEPIN_CERT_END "\n" STEPIN_END "\n",
                            big);
    fp = fmemopen (text, strlen (text), "r");
    assert_int_equal (stepin_read (fp, 0, &me, &n, err, sizeof err), -1);
    assert_string_equal (err, "a line of stdin is too long");
    fclose (fp);
    free (text);
    free (big);
    const char *twice = STEPIN_RANK " 3 0 a -\n" STEPIN_CERT_END "\n" STEPIN_RANK " 3 0 b -\n"
                        STEPIN_CERT_END "\n" STEPIN_END "\n";
    fp = fmemopen ((char *) twice, strlen (twice), "r");
    assert_int_equal (stepin_read (fp, 0, &me, &n, err, sizeof err), -1);
    assert_string_equal (err, "a rank has two blocks on stdin");
    assert_null (me);
    fclose (fp);
    int rank, sig;
    assert_int_equal (stepin_signal_parse (STEPIN_SIGNAL " 1 2\n", &rank, &sig), -1);
    assert_int_equal (stepin_signal_parse (STEPIN_SIGNAL " -1 9\n", &rank, &sig), -1);
    assert_int_equal (stepin_signal_parse (STEPIN_SIGNAL " 1 15 x\n", &rank, &sig), -1);
    assert_int_equal (stepin_signal_parse (STEPIN_SIGNAL " 1 15\n", &rank, &sig), 0);
}

static void
test_rank (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    assert_int_equal (stepin_rank_parse ("0", err, sizeof err), 0);
    assert_int_equal (stepin_rank_parse ("65535", err, sizeof err), 65535);
    const char *bad[] = {"", "-1", "65536", "1x", " 1", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (stepin_rank_parse (bad[i], err, sizeof err) != -1)
            fail_msg ("accepted \"%s\"", bad[i]);
    assert_int_equal (stepin_rank_parse (NULL, err, sizeof err), -1);
    assert_non_null (strstr (err, "SLURM_PROCID=(unset)"));
}

/*  --tree auto --fanout 2 over five hosts: a complete binary tree in the
 *  allocation's order, named after the hosts, on host slurm, slots from
 *  the CPUs (capped), the other fields from the config's nodes. */
static void
test_tree_auto (void **state)
{
    (void) state;
    char err[TF_ERRLEN];
    const char *text = "{\"name\": \"t\", \"platform\": {\"mode\": \"real\"},"
                       " \"tree\": [{\"name\": \"r\", \"compute\": 7},"
                       " {\"name\": \"c\", \"parent\": \"r\", \"compute\": 3,"
                       " \"link_mbps\": 40}]}";
    config_t *cfg = config_load_string (text, "t.json", err, sizeof err);
    assert_non_null (cfg);
    char *hosts[] = {"h0", "h1", "h2", "h3", "h4"};
    int cpus[] = {4, 2, 1, 300, 8};
    slurm_alloc_t *alloc = slurm_alloc_new ("7", hosts, cpus, 5, err, sizeof err);
    config_t *tree = slurm_tree_config (cfg, alloc, 2, "t.json", err, sizeof err);
    if (!tree)
        fail_msg ("%s", err);
    assert_int_equal (tree->nnodes, 5);
    int parent[] = {-1, 0, 0, 1, 1};
    for (int i = 0; i < 5; i++) {
        assert_string_equal (tree->nodes[i].name, hosts[i]);
        assert_string_equal (tree->nodes[i].host, "slurm");
        assert_int_equal (tree->nodes[i].parent, parent[i]);
        assert_int_equal (tree->nodes[i].slots, cpus[i] < CONFIG_MAX_SLOTS ? cpus[i]
                                                                           : CONFIG_MAX_SLOTS);
    }
    assert_true (tree->nodes[0].compute_rate == 7);
    assert_true (tree->nodes[4].compute_rate == 3 && tree->nodes[4].link_mbps == 40);
    config_destroy (&tree);
    assert_null (slurm_tree_config (cfg, alloc, 0, "t.json", err, sizeof err));
    assert_non_null (strstr (err, "--fanout 0: expected 1..1024"));
    slurm_alloc_destroy (&alloc);
    config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_cpus),
        cmocka_unit_test (test_hosts),
        cmocka_unit_test (test_place),
        cmocka_unit_test (test_stepin_read),
        cmocka_unit_test (test_stepin_refusals),
        cmocka_unit_test (test_rank),
        cmocka_unit_test (test_tree_auto),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
