/*  stepin — the srun step's stdin: the nodes' blocks, the signal lines.
 *  See stepin.h.
 */
#include "overlay/stepin.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/curve.h"
#include "overlay/util.h"

char *
stepin_block (int rank, int task, const char *name, const char *bind, const char *cert)
{
    return xasprintf ("%s %d %d %s %s\n%s%s\n", STEPIN_RANK, rank, task, name,
                      bind && *bind ? bind : STEPIN_NO_BIND, cert ? cert : "",
                      STEPIN_CERT_END);
}

char *
stepin_signal_line (int rank, int sig)
{
    return xasprintf ("%s %d %d\n", STEPIN_SIGNAL, rank, sig);
}

int
stepin_signal_parse (const char *line, int *rank, int *sig)
{
    char tail[2];
    int n = sscanf (line, STEPIN_SIGNAL " %d %d %1s", rank, sig, tail);
    if (n != 2 || *rank < 0 || *rank >= STEPIN_RANKS_MAX)
        return -1;
    return *sig == SIGTERM || *sig == SIGKILL ? 0 : -1;
}

int
stepin_rank_parse (const char *text, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = text && *text >= '0' && *text <= '9' ? strtol (text, &end, 10) : -1;
    if (v < 0 || errno || *end || v >= STEPIN_RANKS_MAX)
        return tf_error (err, errlen, "SLURM_PROCID=%s is not a task rank in 0..%d",
                         text ? text : "(unset)", STEPIN_RANKS_MAX - 1);
    return (int) v;
}

void
stepin_node_clear (stepin_node_t *out)
{
    if (out->cert) {
        explicit_bzero (out->cert, strlen (out->cert));
        free (out->cert);
    }
    out->cert = NULL;
}

/*  The rank line "#treefarm-rank R T NAME BIND" into its parts. */
static int
parse_rank_line (const char *line, int *rank, int *task, char *name, char *bind)
{
    char tail[2];
    char fmt[64];
    snprintf (fmt, sizeof fmt, STEPIN_RANK " %%d %%d %%%ds %%%ds %%1s", STEPIN_NAME_MAX,
              STEPIN_BIND_MAX);
    if (sscanf (line, fmt, rank, task, name, bind, tail) != 4 || *rank < 0
        || *rank >= STEPIN_RANKS_MAX || *task < 0 || *task >= STEPIN_RANKS_MAX)
        return -1;
    if (strcmp (bind, STEPIN_NO_BIND) == 0)
        bind[0] = '\0';
    return 0;
}

/*  Append line to out's certificate, within CURVE_FILE_MAX. */
static int
add_cert_line (stepin_node_t *out, const char *line)
{
    size_t have = out->cert ? strlen (out->cert) : 0, len = strlen (line);
    if (have + len > CURVE_FILE_MAX)
        return -1;
    char *more = xmalloc (have + len + 1);
    memcpy (more, out->cert ? out->cert : "", have);
    memcpy (more + have, line, len + 1);
    stepin_node_clear (out);
    out->cert = more;
    return 0;
}

/*  Read one line into buf; 1, 0 at end of file, -1 if too long. */
static int
read_line (FILE *in, char *buf, size_t len)
{
    if (!fgets (buf, (int) len, in))
        return 0;
    size_t n = strlen (buf);
    return n > 0 && buf[n - 1] == '\n' ? 1 : feof (in) ? 1 : -1;
}

/*  A new entry at the end of the list, zeroed. */
static stepin_node_t *
add_node (stepin_node_t **nodes, int *n)
{
    *nodes = xrealloc (*nodes, (size_t) (*n + 1) * sizeof **nodes);
    memset (&(*nodes)[*n], 0, sizeof **nodes);
    return &(*nodes)[(*n)++];
}

/*  Has the list a node of rank already? */
static int
has_rank (const stepin_node_t *nodes, int n, int rank)
{
    for (int i = 0; i < n; i++)
        if (nodes[i].rank == rank)
            return 1;
    return 0;
}

/*  A block's rank line for task: its node at the end of the list (*mine),
 *  or NULL for another task's. Returns 1, or -4 (a rank twice), -5 (too
 *  many nodes). */
static int
begin_block (const char *line, int task, stepin_node_t **nodes, int *n,
             stepin_node_t **mine)
{
    char name[STEPIN_NAME_MAX + 1], bind[STEPIN_BIND_MAX + 1];
    int r, t;
    *mine = NULL;
    parse_rank_line (line, &r, &t, name, bind);
    if (t != task)
        return 1;
    if (has_rank (*nodes, *n, r))
        return -4;
    if (*n >= STEPIN_TASK_NODES_MAX)
        return -5;
    *mine = add_node (nodes, n);
    (*mine)->rank = r;
    memcpy ((*mine)->name, name, sizeof name);
    memcpy ((*mine)->bind, bind, sizeof bind);
    return 1;
}

int
stepin_read (FILE *in, int task, stepin_node_t **out, int *nout, char *err, size_t errlen)
{
    char *line = xmalloc (STEPIN_LINE_MAX + 2);
    char name[STEPIN_NAME_MAX + 1], bind[STEPIN_BIND_MAX + 1];
    int rc, in_block = 0, r, t;
    stepin_node_t *nodes = NULL, *mine = NULL;
    int n = 0;
    while ((rc = read_line (in, line, STEPIN_LINE_MAX + 2)) == 1) {
        if (strcmp (line, STEPIN_END "\n") == 0)
            break;
        if (!in_block && parse_rank_line (line, &r, &t, name, bind) == 0) {
            in_block = 1;
            if ((rc = begin_block (line, task, &nodes, &n, &mine)) != 1)
                break;
        }
        else if (!in_block) {
            rc = -2;
            break;
        }
        else if (strcmp (line, STEPIN_CERT_END "\n") == 0)
            in_block = 0;
        else if (mine && add_cert_line (mine, line) != 0) {
            rc = -3;
            break;
        }
        explicit_bzero (line, strlen (line));
        if (!in_block)
            mine = NULL;
    }
    explicit_bzero (line, STEPIN_LINE_MAX + 2);
    free (line);
    if (rc == 1 && n > 0) {
        *out = nodes;
        *nout = n;
        return 0;
    }
    stepin_nodes_free (&nodes, n);
    return tf_error (err, errlen, "%s", rc == 0 ? "end of stdin before the ranks' end"
                     : rc == -1 ? "a line of stdin is too long"
                     : rc == -2 ? "stdin has a line outside a rank's block"
                     : rc == -3 ? "the certificate is too long"
                     : rc == -4 ? "a rank has two blocks on stdin"
                     : rc == -5 ? "more nodes for this task than it may start"
                     : "no block for this task on stdin");
}

void
stepin_nodes_free (stepin_node_t **nodes, int n)
{
    for (int i = 0; nodes && *nodes && i < n; i++)
        stepin_node_clear (&(*nodes)[i]);
    if (nodes) {
        free (*nodes);
        *nodes = NULL;
    }
}
