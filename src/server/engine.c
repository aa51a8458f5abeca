/* engine.c - see engine.h. */
#include "server/engine.h"
#include "cmd/acl.h"
#include "cmd/multi.h"
#include "cmd/cmd.h"
#include "cmd/dispatch.h"
#include "lib/clock.h"
#include "lib/mem.h"
#include "lib/util.h"
#include "server/config.h"
#include "shard/pubsub.h"
#include "shard/tracking.h"
#include "shard/shard.h"
#include <stdlib.h>

static int64_t start_ms;

void engine_init(void) {
    start_ms = mstime();
    hash_seed((uint64_t)ustime() * 0x9e3779b97f4a7c15ull);
    cmd_table_init();
    acl_init();
    acl_check_init();
}

int64_t engine_start_time_ms(void) { return start_ms; }

int engine_open(int n) {
    if (!cfg.databases_i) config_defaults();
    engine_init();
    return shard_create_all(n);
}

session *engine_session(buf *out) {
    session *s = zcalloc(sizeof *s);
    s->id = session_next_id();
    s->resp = 2;
    s->out = out;
    s->sh = shards[0];
    s->ctime_ms = mstime();
    return s;
}

void engine_session_free(session *s) {
    multi_discard(s);
    pubsub_session_free(s);
    tracking_conn_close(s);
    zfree(s->name);
    zfree(s);
}

void engine_exec(session *s, int argc, const char **argv, const size_t *argl) {
    if (argc <= 0) return;
    dispatch_command(s, argc, argv, argl);
}
