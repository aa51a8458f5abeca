/* fuzz_rdb.c - libFuzzer target for the RDB decoder (src/persist/).
 *
 * The input's first byte picks the path:
 *   even: the rest is a RESTORE value (type byte + value, no footer),
 *         decoded with rdb_read_entry; a value that decodes is DUMPed, the
 *         payload must verify and decode again, and its DUMP must have
 *         the same size (hashtable members may come out in another
 *         order, so the bytes themselves may differ);
 *   odd:  the rest follows "REDIS0010" as a whole file and goes through
 *         rdb_load_mem into the engine's shard (keys load as they are
 *         read; a CRC of 8 zero bytes after EOF is not checked).
 * Every database is emptied after each input. */
#include "lib/buf.h"
#include "lib/log.h"
#include "persist/rdb.h"
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
    ready = 1;
}

static void value_case(const uint8_t *p, size_t n) {
    if (!n) return;
    rdb_in in = {p + 1, n - 1, 0};
    entry *e = NULL;
    if (rdb_read_entry(&in, p[0], "k", 1, -1, &e) != RDB_OK) return;
    buf a = {0}, b = {0};
    rdb_dump(&a, e);
    entry *e2 = NULL;
    if (!rdb_dump_verify(a.p, a.len) || rdb_undump(a.p, a.len, "k", 1, -1, &e2) != RDB_OK) abort();
    rdb_dump(&b, e2);
    if (a.len != b.len) abort();
    entry_free(e);
    entry_free(e2);
    buf_free(&a);
    buf_free(&b);
}

static void file_case(const uint8_t *p, size_t n) {
    buf f = {0};
    buf_add(&f, "REDIS0010", 9);
    buf_add(&f, p, n);
    char err[256];
    rdb_load_mem((const uint8_t *)f.p, f.len, -1, 0, NULL, err, sizeof err);
    buf_free(&f);
    for (int d = 0; d < (int)cfg.databases_i; d++)
        db_clear(&shards[0]->dbs[d]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (!size) return 0;
    if (data[0] & 1)
        file_case(data + 1, size - 1);
    else
        value_case(data + 1, size - 1);
    return 0;
}
