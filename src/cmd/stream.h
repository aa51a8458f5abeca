/* stream.h - what the stream command files (stream.c, stream_cg.c,
 * stream_read.c) share: ID arguments, key lookup and the entry replies.
 * Everything runs on the thread that owns the key. */
#ifndef SHOAL_CMD_STREAM_H
#define SHOAL_CMD_STREAM_H
#include "cmd/cmd.h"
#include "core/stream.h"
#include "shard/db.h"

/* Parses an ID as Redis's streamGenericParseIDOrReply: "-" / "+" unless
 * strict, "ms" (seq = missing_seq), "ms-seq", and "ms-*" when seq_given is
 * not NULL (*seq_given = 0 then). 0 ok, -1 invalid (no reply). */
int xid_parse(const char *s, size_t n, sid *id, uint64_t missing_seq, int strict, int *seq_given);
/* The same for argv[i], replying "ERR Invalid stream ID ..." on failure (0). */
int arg_xid(cmd_ctx *c, int i, sid *id, uint64_t missing_seq, int strict, int *seq_given);
/* An interval bound: "(" prefix for exclusive (*excl set). 0 after replying. */
int arg_xinterval(cmd_ctx *c, int i, sid *id, int *excl, uint64_t missing_seq);
void reply_xid(cmd_ctx *c, const sid *id);

/* The stream at argv[i]: NULL when missing (*wrong = 0) or, after replying
 * WRONGTYPE, of another type (*wrong = 1). */
stream *xlookup(cmd_ctx *c, int i, int reading, db **dp, int *wrong);

enum { XR_NOACK = 1, XR_HISTORY = 2, XR_RAW = 4 };
/* Replies the live entries in [start, end] (count 0: all) as an array (no
 * array header with XR_RAW); with a group, entries go to the consumer's PEL
 * and advance the group (XREADGROUP). Returns how many were emitted. */
size_t xreply_range(cmd_ctx *c, stream *s, const sid *start, const sid *end, long long count, int rev, cgroup *g,
                    consumer *cons, int flags);
/* Wakes clients blocked on the key (XADD, XGROUP CREATE...). */
void xsignal(cmd_ctx *c, const char *key, size_t klen);
#endif
