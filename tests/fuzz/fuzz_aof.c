/* fuzz_aof.c - libFuzzer target for the AOF's readers (src/persist/aof_*).
 *
 * The input's first byte picks the path:
 *   even: the rest is a manifest; when it parses (and lists a file), its
 *         text is formatted, parsed again and formatted again: both texts
 *         must be equal (a manifest shoal writes reads back the same, as
 *         long as quoting keeps its lines within 1024 bytes);
 *   odd:  the rest is the content of an incr file. It is parsed to the end
 *         (every AOFP_CMD must leave the position inside the input and
 *         past where it was), then replayed into the engine's shard in
 *         loading mode (SELECT, MULTI/EXEC blocks, refusals of unknown
 *         commands and bad tails).
 * Kept out of the replay: inputs with administrative commands (SHUTDOWN,
 * DEBUG, SAVE, CONFIG: they stop the process, sleep or write files) and
 * CLIENT. proto-max-bulk-len is lowered to 1mb so strings stay small;
 * a FLUSHALL replayed after each input empties every database. */
#include "cmd/cmd.h"
#include "cmd/dispatch.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/util.h"
#include "persist/aof.h"
#include "persist/aof_manifest.h"
#include "persist/aof_parse.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/shard.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ready;

static void setup(void) {
    engine_open(1);
    log_set_level(LOG_NOTHING);
    cfg.proto_max_bulk_len_i = 1024 * 1024;
    ready = 1;
}

static size_t longest_line(const buf *b) {
    size_t best = 0, start = 0;
    for (size_t i = 0; i < b->len; i++)
        if (b->p[i] == '\n') {
            if (i + 1 - start > best) best = i + 1 - start;
            start = i + 1;
        }
    return best;
}

static void manifest_case(const char *p, size_t n) {
    aof_manifest m, m2;
    char err[256];
    int line;
    if (aof_manifest_parse(p, n, &m, &line, err, sizeof err) < 0) return;
    buf a = {0}, b = {0};
    aof_manifest_format(&m, &a);
    /* Only comments: nothing to write back (shoal never writes one without
     * files). Names that quoting makes longer than a line may be: Redis's
     * limit, its writer has the same edge. */
    if (!a.len || longest_line(&a) > 1024) {
        aof_manifest_free(&m);
        buf_free(&a);
        return;
    }
    if (aof_manifest_parse(a.p ? a.p : "", a.len, &m2, &line, err, sizeof err) < 0) {
        fprintf(stderr, "fuzz_aof: formatted manifest does not parse: %s\n", err);
        abort();
    }
    aof_manifest_format(&m2, &b);
    if (a.len != b.len || memcmp(a.p, b.p, a.len)) abort();
    aof_manifest_free(&m);
    aof_manifest_free(&m2);
    buf_free(&a);
    buf_free(&b);
}

/* 1 when every command of the stream may run here. */
static int replayable(const char *p, size_t n) {
    aof_cmd c = {0};
    size_t pos = 0, before;
    int ok = 1;
    for (;;) {
        before = pos;
        if (aof_parse_next(p, n, &pos, &c, NULL) != AOFP_CMD) break;
        if (pos <= before || pos > n) abort();
        char err[512];
        const command *cmd = dispatch_resolve(c.argc, c.argv, c.argl, err, sizeof err, NULL);
        if ((cmd && (cmd->flags & CMD_ADMIN)) || str_eq_ci(c.argv[0], c.argl[0], "client")) ok = 0;
    }
    aof_cmd_free(&c);
    return ok;
}

static void stream_case(const char *p, size_t n) {
    static const char flushall[] = "*1\r\n$8\r\nFLUSHALL\r\n";
    if (!replayable(p, n)) return;
    aof_replay_mem(p, n, "fuzz.incr.aof");
    aof_replay_mem(flushall, sizeof flushall - 1, "flushall"); /* the next input starts empty */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size) {
        const char *rest = (const char *)data + 1;
        (data[0] & 1 ? stream_case : manifest_case)(rest, size - 1);
    }
    return 0;
}
