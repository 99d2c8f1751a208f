/*  slurm_tree — `treefarm run --slurm --tree auto --fanout K`: a tree made
 *  of the Slurm allocation's hosts (docs/deploy.md, "Slurm").
 *
 *  One node per host of the allocation, in its order, named after the
 *  host, on host "slurm" (so the placement puts node i on host i), its
 *  slots the host's CPUs (at most CONFIG_MAX_SLOTS), its parent node
 *  (i - 1) / K: a complete K-ary tree in breadth-first order. Every other
 *  field of a node is the config's: the root's for the root, the config's
 *  second node's (or, alone, its root's) for the others; the platform,
 *  the bag and the policy stay as the config says.
 */
#ifndef TF_SLURM_TREE_H
#define TF_SLURM_TREE_H

#include <stddef.h>

#include "controller/slurm.h"
#include "overlay/config.h"

/*  The most children --fanout may give a node. */
#define SLURM_TREE_FANOUT_MAX 1024

/*  cfg with its tree replaced as above for alloc, fanout children a node
 *  (1..SLURM_TREE_FANOUT_MAX), loaded and checked as a config is; origin
 *  names it in messages. A new config, or NULL with err filled (a field
 *  the new tree breaks, named as config errors are). */
config_t *slurm_tree_config (const config_t *cfg, const slurm_alloc_t *alloc, int fanout,
                             const char *origin, char *err, size_t errlen);

#endif
