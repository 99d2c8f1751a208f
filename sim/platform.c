/*  platform — see platform.h. */
#include "sim/platform.h"

#include "node/setup.h"

double
sim_platform_latency (const config_t *cfg, int node)
{
    return SIM_BASE_LATENCY + cfg->nodes[node].delay_ms / 1000 / cfg->platform.time_scale;
}

/*  Node i's zone: its host, its children's zones, their links and the
 *  routes both ways. Recursive over the tree's depth (the loader bounds
 *  it: CONFIG_MAX_NODES). */
static void
write_zone (const config_t *cfg, int i, FILE *out)
{
    const config_node_t *n = &cfg->nodes[i];
    double bps = setup_bps_per_mbps (cfg);
    double speed = n->compute_rate * cfg->platform.time_scale;
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
    if (n->send_limit_mbps > 0)
        fprintf (out, "<link id=\"s%d\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", i,
                 n->send_limit_mbps * bps);
    for (int k = 0; k < n->nchildren; k++) {
        int c = n->children[k];
        fprintf (out, "<link id=\"l%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" "
                 "sharing_policy=\"SPLITDUPLEX\"/>\n", c,
                 cfg->nodes[c].link_mbps * bps, sim_platform_latency (cfg, c));
    }
    for (int k = 0; k < n->nchildren; k++) {
        int c = n->children[k];
        fprintf (out, "<zoneRoute src=\"h%d\" dst=\"z%d\" gw_src=\"n%d\" gw_dst=\"n%d\" "
                 "symmetrical=\"NO\">", i, c, i, c);
        if (n->send_limit_mbps > 0)
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
