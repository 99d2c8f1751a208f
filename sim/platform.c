/*  platform — see platform.h. */
#include "sim/platform.h"

#include "node/setup.h"

/*  A vacant child slot's host speed and link bandwidth (bytes/s) until
 *  a node takes it (sim/join.c sets its link's then; its engines go at
 *  the node's own speed): positive, as SimGrid wants, and idle. Its send
 *  limit's link is there for the node's own vacant slots' routes, too
 *  wide to limit anything until a node with a limit takes the slot. */
#define VACANT_SPEED 1.0
#define VACANT_BPS 1.0
#define VACANT_LIMIT_BPS 1e15

double
sim_platform_latency (const config_t *cfg, int node)
{
    return cfg->nodes[node].delay_ms / 1000 / cfg->platform.time_scale;
}

/*  Node i's zone: its host, its children's zones, their links and the
 *  routes both ways. Recursive over the tree's depth (the loader bounds
 *  it: CONFIG_MAX_NODES). */
static void
write_zone (const config_t *cfg, int i, FILE *out)
{
    const config_node_t *n = &cfg->nodes[i];
    double bps = setup_bps_per_mbps (cfg);
    double speed = n->vacant ? VACANT_SPEED : n->compute_rate * cfg->platform.time_scale;
    int limited = n->send_limit_mbps > 0 || n->vacant;
    if (n->nchildren == 0) {
        fprintf (out, "<zone id=\"z%d\" routing=\"None\"><host id=\"n%d\" speed=\"%.17gf\"/>"
                 "</zone>\n", i, i, speed);
        return;
    }
    fprintf (out, "<zone id=\"z%d\" routing=\"Full\">\n", i);
    fprintf (out, "<zone id=\"h%d\" routing=\"None\"><host id=\"n%d\" speed=\"%.17gf\"/>"
             "</zone>\n", i, i, speed);
    for (int k = 0; k < n->nchildren; k++)
        write_zone (cfg, n->children[k], out);
    if (limited)
        fprintf (out, "<link id=\"s%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", i,
                 n->vacant ? VACANT_LIMIT_BPS : n->send_limit_mbps * bps);
    for (int k = 0; k < n->nchildren; k++) {
        const config_node_t *c = &cfg->nodes[n->children[k]];
        fprintf (out, "<link id=\"l%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" "
                 "sharing_policy=\"SPLITDUPLEX\"/>\n", n->children[k],
                 c->vacant ? VACANT_BPS : c->link_mbps * bps,
                 sim_platform_latency (cfg, n->children[k]));
    }
    for (int k = 0; k < n->nchildren; k++) {
        int c = n->children[k];
        fprintf (out, "<zoneRoute src=\"h%d\" dst=\"z%d\" gw_src=\"n%d\" gw_dst=\"n%d\" "
                 "symmetrical=\"NO\">", i, c, i, c);
        if (limited)
            fprintf (out, "<link_ctn id=\"s%d\"/>", i);
        fprintf (out, "<link_ctn id=\"l%d\" direction=\"DOWN\"/></zoneRoute>\n", c);
        fprintf (out, "<zoneRoute src=\"z%d\" dst=\"h%d\" gw_src=\"n%d\" gw_dst=\"n%d\" "
                 "symmetrical=\"NO\"><link_ctn id=\"l%d\" direction=\"UP\"/></zoneRoute>\n",
                 c, i, c, i, c);
    }
    fprintf (out, "</zone>\n");
}

int
sim_platform_write (const config_t *cfg, FILE *out)
{
    fprintf (out, "<?xml version='1.0'?>\n"
             "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
             "<platform version=\"4.1\">\n");
    write_zone (cfg, cfg->root, out);
    fprintf (out, "</platform>\n");
    return fflush (out) == 0 && !ferror (out) ? 0 : -1;
}
