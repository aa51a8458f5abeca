/* cluster.c - CLUSTER (every subcommand), READONLY and READWRITE as Redis
 * 7.0 answers them with cluster-enabled no, shoal's only mode: the error
 * "This instance has cluster support disabled". The rows carry Redis's
 * arities and flags, so COMMAND, ACL categories and scripts (CLUSTER RESET
 * is noscript) see them as Redis shows them. */
#include "cmd/cmd.h"

static void disabled(cmd_ctx *c) { reply_error(c, "ERR This instance has cluster support disabled"); }

#define ADM (CMD_ADMIN | CMD_STALE)
#define ADM_NAL (ADM | CMD_NO_ASYNC_LOADING) /* changes the cluster: Redis refuses it while loading async */
#define SUB(nm, ar, fl, sum)                                                                                           \
    {.name = "cluster|" nm, .proc = disabled, .arity = ar, .flags = fl, .group = "cluster", .since = "3.0.0",         \
     .acl = ((fl) & CMD_ADMIN) ? "admin slow dangerous" : "slow", .summary = sum}

static command cluster_subs[] = {
    SUB("addslots", -3, ADM_NAL, "Assign new hash slots to receiving node"),
    SUB("addslotsrange", -4, ADM_NAL, "Assign new hash slots to receiving node"),
    SUB("bumpepoch", 2, ADM_NAL, "Advance the cluster config epoch"),
    SUB("count-failure-reports", 3, ADM, "Return the number of failure reports active for a given node"),
    SUB("countkeysinslot", 3, CMD_STALE, "Return the number of local keys in the specified hash slot"),
    SUB("delslots", -3, ADM_NAL, "Set hash slots as unbound in receiving node"),
    SUB("delslotsrange", -4, ADM_NAL, "Set hash slots as unbound in receiving node"),
    SUB("failover", -2, ADM_NAL, "Forces a replica to perform a manual failover of its master."),
    SUB("flushslots", 2, ADM_NAL, "Delete a node's own slots information"),
    SUB("forget", 3, ADM_NAL, "Remove a node from the nodes table"),
    SUB("getkeysinslot", 4, CMD_STALE, "Return local key names in the specified hash slot"),
    SUB("help", 2, CMD_LOADING | CMD_STALE, "Show helpful text about the different subcommands"),
    SUB("info", 2, CMD_STALE, "Provides info about Redis Cluster node state"),
    SUB("keyslot", 3, CMD_STALE, "Returns the hash slot of the specified key"),
    SUB("links", 2, CMD_STALE, "Returns a list of all TCP links to and from peer nodes in cluster"),
    SUB("meet", -4, ADM_NAL, "Force a node cluster to handshake with another node"),
    SUB("myid", 2, CMD_STALE, "Return the node id"),
    SUB("nodes", 2, CMD_STALE, "Get Cluster config for the node"),
    SUB("replicas", 3, ADM, "List replica nodes of the specified master node"),
    SUB("replicate", 3, ADM_NAL, "Reconfigure a node as a replica of the specified master node"),
    SUB("reset", -2, ADM | CMD_NOSCRIPT, "Reset a Redis Cluster node"),
    SUB("saveconfig", 2, ADM_NAL, "Forces the node to save cluster state on disk"),
    SUB("set-config-epoch", 3, ADM_NAL, "Set the configuration epoch in a new node"),
    SUB("setslot", -4, ADM_NAL, "Bind a hash slot to a specific node"),
    SUB("shards", 2, CMD_STALE, "Get array of cluster slots to node mappings"),
    SUB("slaves", 3, ADM, "List replica nodes of the specified master node"),
    SUB("slots", 2, CMD_STALE, "Get array of Cluster slot to node mappings"),
};

static const command rows[] = {
    {.name = "cluster", .arity = -2, .group = "cluster", .since = "3.0.0", .acl = "slow",
     .summary = "A container for cluster commands", .subs = cluster_subs,
     .nsubs = (int)(sizeof cluster_subs / sizeof cluster_subs[0])},
    {.name = "readonly", .proc = disabled, .arity = 1, .flags = CMD_FAST | CMD_LOADING | CMD_STALE, .group = "cluster",
     .since = "3.0.0", .acl = "fast connection", .summary = "Enables read queries for a connection to a cluster replica node"},
    {.name = "readwrite", .proc = disabled, .arity = 1, .flags = CMD_FAST | CMD_LOADING | CMD_STALE, .group = "cluster",
     .since = "3.0.0", .acl = "fast connection", .summary = "Disables read queries for a connection to a cluster replica node"},
};

void cluster_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
