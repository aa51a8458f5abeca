/* families.h - every command family file; each defines <name>_register().
 * Adding a family: add a row here and a src/cmd/<name>.c. */
#ifndef SHOAL_FAMILIES_H
#define SHOAL_FAMILIES_H
/* one family a line (merges of new families stay simple) */
#define CMD_FAMILIES(X) \
    X(string) \
    X(bitmap) \
    X(keys) \
    X(expire) \
    X(connection) \
    X(server) \
    X(hash) \
    X(set) \
    X(zset) \
    X(list) \
    X(blocking) \
    X(persist) \
    X(sort) \
    X(multi) \
    X(stream) \
    X(stream_cg) \
    X(stream_read) \
    X(slowlog) \
    X(latency) \
    X(lolwut) \
    X(debug) \
    X(hll) \
    X(geo) \
    X(script) \
    X(function) \
    X(acl) \
    X(maxmemory) \
    X(pubsub) \
    X(monitor) \
    X(cluster) \
    X(migrate) \
    X(memory) \
    X(replication) \
    X(replicaof)
#define DECL(f) void f##_register(void);
CMD_FAMILIES(DECL)
#undef DECL
#endif
