/* fuzz_acl.c - libFuzzer target for the ACL parsers (src/cmd/acl.h): the
 * rules of ACL SETUSER and the aclfile.
 *
 * Byte 0 picks the mode. Even: the rest is an aclfile, parsed into users
 * (acl_file_parse); the parse must succeed or fail with a message, never
 * crash. Odd: the rest is one rule per line, applied to a fresh user as
 * ACL SETUSER applies them (acl_user_rules). Either way every user that
 * came out is checked by a round trip: its description (what ACL LIST and
 * ACL SAVE write) parsed back as an aclfile line must give a user with the
 * same description; and a few commands go through the permission check. */
#include "cmd/acl.h"
#include "lib/buf.h"
#include "lib/mem.h"
#include "server/config.h"
#include "server/engine.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RULES 256

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    config_defaults();
    engine_init();
    return 0;
}

static void check_commands(const acl_user *u) {
    static const char *const lines[][4] = {
        {"get", "key", NULL},   {"set", "key", "v", NULL}, {"select", "0", NULL},
        {"client", "id", NULL}, {"copy", "a", "b", NULL},  {"set", "k", "v", "get"},
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        const char *argv[4];
        size_t argl[4];
        int argc = 0;
        for (; argc < 4 && lines[i][argc]; argc++) {
            argv[argc] = lines[i][argc];
            argl[argc] = strlen(lines[i][argc]);
        }
        const command *c = cmd_lookup(argv[0], argl[0]);
        if (c && c->nsubs) c = cmd_lookup_sub(c, argv[1], argl[1]);
        if (!c) abort();
        int pos;
        int r = acl_check(u, c, argc, argv, argl, &pos);
        if (r != ACL_OK && r != ACL_DENIED_CMD && r != ACL_DENIED_KEY) abort();
    }
}

/* The description, parsed back, describes itself the same way. */
static void round_trip(const acl_user *u) {
    buf d = {0}, line = {0}, again = {0};
    acl_user_describe(u, &d);
    buf_adds(&line, "user fz ");
    buf_add(&line, d.p, d.len);
    acl_user **us;
    char err[1024];
    int n = acl_file_parse(line.p, line.len, &us, err, sizeof err);
    if (n < 1) {
        fprintf(stderr, "description does not parse: %.*s\n%s\n", (int)line.len, line.p, err);
        abort();
    }
    for (int i = 0; i < n; i++) {
        if (us[i]->namelen == 2 && !memcmp(us[i]->name, "fz", 2)) {
            acl_user_describe(us[i], &again);
            if (again.len != d.len || memcmp(again.p, d.p, d.len)) {
                fprintf(stderr, "round trip differs:\n%.*s\n%.*s\n", (int)d.len, d.p, (int)again.len, again.p);
                abort();
            }
        }
        acl_user_free(us[i]);
    }
    zfree(us);
    buf_free(&d);
    buf_free(&line);
    buf_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    char err[2048];
    if (!(data[0] & 1)) {
        acl_user **us;
        int n = acl_file_parse(text, len, &us, err, sizeof err);
        if (n < 0) return 0;
        for (int i = 0; i < n; i++) {
            round_trip(us[i]);
            check_commands(us[i]);
            acl_user_free(us[i]);
        }
        zfree(us);
        return 0;
    }
    const char *ops[MAX_RULES];
    size_t lens[MAX_RULES];
    int n = 0;
    size_t at = 0;
    while (at <= len && n < MAX_RULES) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t l = nl ? (size_t)(nl - (text + at)) : len - at;
        ops[n] = text + at;
        lens[n++] = l;
        at += l + 1;
        if (!nl) break;
    }
    acl_user *u = acl_user_new("fz", 2);
    int bad;
    if (acl_user_rules(u, n, ops, lens, &bad, err, sizeof err) == 0) {
        round_trip(u);
        check_commands(u);
    }
    acl_user_free(u);
    return 0;
}
