/* table.c - the command table: registration, case-insensitive lookup, key
 * positions. Filled once at startup by cmd_table_init (before any shard
 * starts) and read-only afterwards. */
#include "cmd/cmd.h"
#include "cmd/families.h"
#include "lib/mem.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define SLOTS 1024 /* power of two, well above the command count */
static const command *by_name[SLOTS];
static int ncmds;

static uint32_t name_hash(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)tolower((unsigned char)s[i])) * 16777619u;
    return h;
}

void cmd_register(const command *rows, int n) {
    for (int i = 0; i < n; i++) {
        const command *c = &rows[i];
        uint32_t h = name_hash(c->name, strlen(c->name)) & (SLOTS - 1);
        while (by_name[h]) h = (h + 1) & (SLOTS - 1);
        by_name[h] = c;
        ncmds++;
    }
}

const command *cmd_lookup(const char *name, size_t len) {
    if (len == 0 || len > 64) return NULL;
    uint32_t h = name_hash(name, len) & (SLOTS - 1);
    while (by_name[h]) {
        const command *c = by_name[h];
        if (strlen(c->name) == len && !strncasecmp(c->name, name, len)) return c;
        h = (h + 1) & (SLOTS - 1);
    }
    return NULL;
}

const command *cmd_lookup_sub(const command *parent, const char *name, size_t len) {
    size_t pl = strlen(parent->name);
    for (int i = 0; i < parent->nsubs; i++) {
        const char *full = parent->subs[i].name; /* "config|get" */
        if (strlen(full) == pl + 1 + len && !strncasecmp(full + pl + 1, name, len)) return &parent->subs[i];
    }
    return NULL;
}

int cmd_count(void) { return ncmds; }

void cmd_foreach(void (*fn)(const command *c, void *ud), void *ud) {
    for (int i = 0; i < SLOTS; i++)
        if (by_name[i]) fn(by_name[i], ud);
}

int cmd_key_positions(const command *cmd, int argc, const char **argv, const size_t *argl, int *pos, int max) {
    if (cmd->keys) return cmd->keys(argc, argv, argl, pos, max);
    if (cmd->first <= 0) return 0;
    int last = cmd->last < 0 ? argc + cmd->last : cmd->last;
    int step = cmd->step > 0 ? cmd->step : 1;
    int n = 0;
    for (int i = cmd->first; i <= last && i < argc && n < max; i += step) pos[n++] = i;
    return n;
}

void cmd_each_key(const command *cmd, int argc, const char **argv, const size_t *argl,
                  void (*fn)(void *ud, const char *key, size_t klen), void *ud) {
    int posbuf[64];
    int max = argc > 64 ? argc : 64;
    int *pos = max > 64 ? zmalloc(sizeof(int) * (size_t)max) : posbuf;
    int n = cmd_key_positions(cmd, argc, argv, argl, pos, max);
    for (int i = 0; i < n; i++)
        fn(ud, argv[pos[i]], argl[pos[i]]);
    if (pos != posbuf) zfree(pos);
}

/* Every command and subcommand numbered for per-command statistics: an
 * open-addressing table from row pointer to index, filled after
 * registration. */
#define IDX_SLOTS 4096
static struct {
    const command *cmd;
    int idx;
} by_ptr[IDX_SLOTS];
static const command *by_idx[IDX_SLOTS / 2];
static int nidx;

static uint32_t ptr_hash(const command *c) { return (uint32_t)(((uintptr_t)c * 11400714819323198485ull) >> 52); }

static void index_add(const command *c) {
    if (nidx >= IDX_SLOTS / 2) return;
    uint32_t h = ptr_hash(c) & (IDX_SLOTS - 1);
    while (by_ptr[h].cmd) h = (h + 1) & (IDX_SLOTS - 1);
    by_ptr[h].cmd = c;
    by_ptr[h].idx = nidx;
    by_idx[nidx++] = c;
}

static void index_row(const command *c, void *ud) {
    (void)ud;
    index_add(c);
    for (int i = 0; i < c->nsubs; i++) index_add(&c->subs[i]);
}

int cmd_index(const command *c) {
    uint32_t h = ptr_hash(c) & (IDX_SLOTS - 1);
    while (by_ptr[h].cmd) {
        if (by_ptr[h].cmd == c) return by_ptr[h].idx;
        h = (h + 1) & (IDX_SLOTS - 1);
    }
    return -1;
}

int cmd_index_count(void) { return nidx; }

const command *cmd_by_index(int i) { return i >= 0 && i < nidx ? by_idx[i] : NULL; }

void cmd_table_init(void) {
    static int done;
    if (done) return;
    done = 1;
#define REG(f) f##_register();
    CMD_FAMILIES(REG)
#undef REG
    cmd_foreach(index_row, NULL);
}
