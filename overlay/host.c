/*  host — parse a node's `host`. See host.h.
 *
 *  The grammar is small and checked strictly, so that a typo fails when
 *  the config is loaded, naming the node, rather than as an ssh error or
 *  a bind failure on a remote machine later.
 */
#include "overlay/host.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "overlay/util.h"

#define HOST_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
#define SSH_PREFIX "ssh://"
#define NETNS_PREFIX "netns:"
#define FORMS "local, an address of this machine, ssh://[user@]host[:port], netns:NAME " \
              "or slurm"
/*  Room for a quoted piece of the text in a message. */
#define QUOTE_LEN 80
/*  Longest IPv6 literal inet_pton reads (INET6_ADDRSTRLEN - 1). */
#define IPV6_TEXT_MAX 45
/*  Digits of the largest port, HOST_PORT_MAX. */
#define PORT_DIGITS_MAX 5

static const char *const kind_names[HOST_KIND_COUNT] = {
    [HOST_LOCAL] = "local", [HOST_SSH] = "ssh", [HOST_NETNS] = "netns",
    [HOST_SLURM] = "slurm",
};

const char *
host_kind_str (host_kind_t kind)
{
    return (unsigned) kind < HOST_KIND_COUNT ? kind_names[kind] : "?";
}

const char *
host_bind_name (const host_t *host)
{
    if (host->kind == HOST_NETNS || host->kind == HOST_SLURM)
        return NULL;
    if (host->kind == HOST_LOCAL && !*host->name)
        return HOST_LOCAL_ADDRESS;
    return host->name;
}

/*  Quote len bytes of text at start (cut to what a message shows). */
static const char *
quote_part (char *buf, size_t size, const char *start, size_t len)
{
    char part[QUOTE_LEN];
    size_t keep = len < sizeof part ? len : sizeof part - 1;
    snprintf (part, sizeof part, "%.*s", (int) keep, start);
    return tf_quote (buf, size, part);
}

/*  1..max characters from HOST_CHARS, the first not one of avoid. */
static int
valid_word (const char *start, size_t len, size_t max, const char *avoid)
{
    if (len < 1 || len > max || strchr (avoid, start[0]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!start[i] || !strchr (HOST_CHARS, start[i]))
            return 0;
    return 1;
}

/*  Copy len bytes at start into dst (room checked by the caller's
 *  validation: len is at most the field's maximum). */
static void
copy_word (char *dst, size_t size, const char *start, size_t len)
{
    snprintf (dst, size, "%.*s", (int) len, start);
}

/*  The port after "host:", digits only, 1..HOST_PORT_MAX. */
static int
parse_port (const char *text, const char *digits, host_t *out, char *err, size_t errlen)
{
    char q[QUOTE_LEN], qp[QUOTE_LEN];
    size_t n = strspn (digits, "0123456789");
    int value = 0;
    for (size_t i = 0; i < n && i < PORT_DIGITS_MAX; i++)
        value = value * 10 + (digits[i] - '0');
    if (n == 0 || n > PORT_DIGITS_MAX || digits[n] != '\0' || value < 1
        || value > HOST_PORT_MAX)
        return tf_error (err, errlen, "bad port %s in %s (expected 1..%d)",
                         tf_quote (qp, sizeof qp, digits), tf_quote (q, sizeof q, text),
                         HOST_PORT_MAX);
    out->port = value;
    return 0;
}

/*  "[v6]" at p: store the address, return what follows, or NULL. */
static const char *
parse_bracketed (const char *text, const char *p, host_t *out, char *err, size_t errlen)
{
    char q[QUOTE_LEN], qa[QUOTE_LEN];
    const char *close = strchr (p, ']');
    size_t len = close ? (size_t) (close - p - 1) : strlen (p);
    unsigned char addr[sizeof (struct in6_addr)];
    char inner[IPV6_TEXT_MAX + 1];
    if (close && len >= 1 && len <= IPV6_TEXT_MAX) {
        copy_word (inner, sizeof inner, p + 1, len);
        if (inet_pton (AF_INET6, inner, addr) == 1) {
            copy_word (out->name, sizeof out->name, inner, len);
            return close + 1;
        }
    }
    size_t shown = close ? (size_t) (close - p + 1) : strlen (p);
    tf_error (err, errlen, "bad IPv6 address %s in %s (expected [ADDRESS])",
              quote_part (qa, sizeof qa, p, shown), tf_quote (q, sizeof q, text));
    return NULL;
}

/*  A host name or IPv4 address at p, up to ':' or '/': store it, return
 *  what follows, or NULL. */
static const char *
parse_hostname (const char *text, const char *p, host_t *out, char *err, size_t errlen)
{
    char q[QUOTE_LEN], qh[QUOTE_LEN];
    size_t len = strcspn (p, ":/");
    if (p[len] == ':' && strchr (p + len + 1, ':'))
        return tf_error (err, errlen, "an IPv6 address goes in brackets "
                         "(ssh://[::1]:22), got %s", tf_quote (q, sizeof q, text)), NULL;
    if (!valid_word (p, len, HOST_NAME_MAX_LEN, "-.")) {
        tf_error (err, errlen, "bad host name %s in %s (expected 1..%d characters from "
                  "[A-Za-z0-9_.-], not starting with - or ., or an IPv6 address in "
                  "brackets)", quote_part (qh, sizeof qh, p, len),
                  tf_quote (q, sizeof q, text), HOST_NAME_MAX_LEN);
        return NULL;
    }
    copy_word (out->name, sizeof out->name, p, len);
    return p + len;
}

/*  ssh://[user@]host[:port] */
static int
parse_ssh (const char *text, host_t *out, char *err, size_t errlen)
{
    char q[QUOTE_LEN], qp[QUOTE_LEN];
    const char *p = text + strlen (SSH_PREFIX);
    const char *at = strchr (p, '@');
    if (at) {
        if (!valid_word (p, (size_t) (at - p), HOST_USER_MAX_LEN, "-"))
            return tf_error (err, errlen, "bad user %s in %s (expected 1..%d characters "
                             "from [A-Za-z0-9_.-], not starting with -)",
                             quote_part (qp, sizeof qp, p, (size_t) (at - p)),
                             tf_quote (q, sizeof q, text), HOST_USER_MAX_LEN);
        copy_word (out->user, sizeof out->user, p, (size_t) (at - p));
        p = at + 1;
    }
    if (!*p || *p == '/' || (*p == ':' && !strchr (p + 1, ':')))
        return tf_error (err, errlen, "empty host in %s (expected "
                         "ssh://[user@]host[:port])", tf_quote (q, sizeof q, text));
    p = *p == '[' ? parse_bracketed (text, p, out, err, errlen)
                  : parse_hostname (text, p, out, err, errlen);
    if (!p)
        return -1;
    if (*p == ':')
        return parse_port (text, p + 1, out, err, errlen);
    if (*p)
        return tf_error (err, errlen, "unexpected %s after the host in %s",
                         tf_quote (qp, sizeof qp, p), tf_quote (q, sizeof q, text));
    return 0;
}

/*  netns:NAME */
static int
parse_netns (const char *text, host_t *out, char *err, size_t errlen)
{
    char q[QUOTE_LEN];
    const char *name = text + strlen (NETNS_PREFIX);
    size_t len = strlen (name);
    if (len == 0)
        return tf_error (err, errlen, "empty namespace name in %s (expected netns:NAME)",
                         tf_quote (q, sizeof q, text));
    if (!valid_word (name, len, HOST_NETNS_MAX_LEN, "-") || strcmp (name, ".") == 0
        || strcmp (name, "..") == 0)
        return tf_error (err, errlen, "bad namespace name in %s (expected 1..%d "
                         "characters from [A-Za-z0-9_.-], not starting with -, not . "
                         "or ..)", tf_quote (q, sizeof q, text), HOST_NETNS_MAX_LEN);
    copy_word (out->name, sizeof out->name, name, len);
    return 0;
}

/*  local, or an address or name of this machine. Anything else that
 *  looks like SCHEME: is an unknown scheme. */
static int
parse_local (const char *text, host_t *out, char *err, size_t errlen)
{
    char q[QUOTE_LEN], qs[QUOTE_LEN];
    unsigned char addr[sizeof (struct in6_addr)];
    size_t len = strlen (text);
    if (strcmp (text, "local") == 0)
        return 0;
    if (inet_pton (AF_INET, text, addr) == 1 || inet_pton (AF_INET6, text, addr) == 1
        || valid_word (text, len, HOST_NAME_MAX_LEN, "-.")) {
        copy_word (out->name, sizeof out->name, text, len);
        return 0;
    }
    size_t scheme = strspn (text, HOST_CHARS "+");
    if (scheme > 0 && text[scheme] == ':' && strncmp (text, "ssh:", 4) == 0)
        return tf_error (err, errlen, "ssh hosts are written ssh://[user@]host[:port], "
                         "got %s", tf_quote (q, sizeof q, text));
    if (scheme > 0 && text[scheme] == ':' && strstr (text, "://"))
        return tf_error (err, errlen, "unknown scheme %s in %s (expected %s)",
                         quote_part (qs, sizeof qs, text, scheme),
                         tf_quote (q, sizeof q, text), FORMS);
    return tf_error (err, errlen, "%s is not one of %s", tf_quote (q, sizeof q, text),
                     FORMS);
}

int
host_parse (const char *text, host_t *out, char *err, size_t errlen)
{
    memset (out, 0, sizeof *out);
    if (!*text)
        return tf_error (err, errlen, "must not be empty (expected %s)", FORMS);
    if (strncmp (text, SSH_PREFIX, strlen (SSH_PREFIX)) == 0) {
        out->kind = HOST_SSH;
        return parse_ssh (text, out, err, errlen);
    }
    if (strncmp (text, NETNS_PREFIX, strlen (NETNS_PREFIX)) == 0) {
        out->kind = HOST_NETNS;
        return parse_netns (text, out, err, errlen);
    }
    if (strcmp (text, HOST_SLURM_TEXT) == 0) {
        out->kind = HOST_SLURM;
        return 0;
    }
    out->kind = HOST_LOCAL;
    return parse_local (text, out, err, errlen);
}
