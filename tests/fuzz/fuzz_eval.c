/* fuzz_eval.c - libFuzzer target that feeds Lua source and arguments
 * through EVAL (and the same source as a function library through FUNCTION
 * LOAD and FCALL) on a one-shard engine, without sockets.
 *
 * Input: an optional first line "#keys N" (0-9) choosing numkeys, then the
 * Lua source up to a line "--ARGS--", then one argument per line. Each input
 * starts from an empty keyspace and script cache. Scripts are bounded by a
 * step budget (a loop ends with an error) and each Lua state by 64 MB. The
 * check beyond the sanitizers: each command writes exactly one well-formed
 * RESP reply. */
#include "cmd/cmd.h"
#include "cmd/script.h"
#include "lib/buf.h"
#include "server/config.h"
#include "server/engine.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ARGS 64

/* Offset just past the reply starting at i, or 0 when it is malformed. */
static size_t reply_end(const buf *b, size_t i, int depth) {
    if (i >= b->len || depth > 2000) return 0;
    size_t k = i;
    while (k + 1 < b->len && !(b->p[k] == '\r' && b->p[k + 1] == '\n')) k++;
    if (k + 1 >= b->len) return 0;
    size_t next = k + 2;
    long long n = strtoll(b->p + i + 1, NULL, 10);
    switch (b->p[i]) {
    case '+': case '-': case ':': case '_': case '#': case ',': case '(': return next;
    case '$': case '=':
        if (n < 0) return next;
        return next + (size_t)n + 2 <= b->len ? next + (size_t)n + 2 : 0;
    case '*': case '~': case '>': case '%': {
        if (n < 0) return next;
        long long items = b->p[i] == '%' ? 2 * n : n;
        for (long long e = 0; e < items; e++) {
            next = reply_end(b, next, depth + 1);
            if (!next) return 0;
        }
        return next;
    }
    default: return 0;
    }
}

static void run(session *s, buf *out, int argc, const char **argv, const size_t *argl) {
    out->len = 0;
    engine_exec(s, argc, argv, argl);
    size_t end = reply_end(out, 0, 0);
    if (end != out->len) {
        fprintf(stderr, "fuzz_eval: '%.*s' wrote a malformed reply (%zu bytes): %.*s\n", (int)argl[0], argv[0],
                out->len, (int)(out->len > 300 ? 300 : out->len), out->p ? out->p : "");
        abort();
    }
}

static void run_str(session *s, buf *out, const char *a0, const char *a1) {
    const char *argv[2] = {a0, a1};
    size_t argl[2] = {strlen(a0), a1 ? strlen(a1) : 0};
    run(s, out, a1 ? 2 : 1, argv, argl);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    char tmpl[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(tmpl, sizeof tmpl, "%s/shoal-fuzz-eval.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpl) || chdir(tmpl) != 0) abort();
    if (engine_open(1) != 0) abort();
    char err[256];
    if (config_set("loglevel", "warning", err, sizeof err) || config_set("save", "", err, sizeof err)) abort();
    slua_step_budget = 200000;
    slua_mem_limit = 64 << 20;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    buf out = {0};
    session *s = engine_session(&out);
    run_str(s, &out, "FLUSHALL", NULL);
    const char *p = (const char *)data, *end = p + size;
    long nkeys = 0;
    if (size >= 7 && !memcmp(p, "#keys ", 6) && p[6] >= '0' && p[6] <= '9') {
        nkeys = p[6] - '0';
        const char *nl = memchr(p, '\n', size);
        p = nl ? nl + 1 : end;
    }
    const char *src = p, *mark = NULL;
    for (const char *q = p; q + 9 <= end; q++)
        if (!memcmp(q, "\n--ARGS--", 9)) {
            mark = q;
            break;
        }
    size_t srclen = (size_t)((mark ? mark : end) - src);
    const char *argv[MAX_ARGS + 3];
    size_t argl[MAX_ARGS + 3];
    int argc = 3;
    if (mark) {
        const char *a = mark + 9;
        if (a < end && *a == '\n') a++;
        while (a < end && argc < MAX_ARGS + 3) {
            const char *nl = memchr(a, '\n', (size_t)(end - a));
            const char *e = nl ? nl : end;
            argv[argc] = a;
            argl[argc] = (size_t)(e - a);
            argc++;
            a = nl ? nl + 1 : end;
        }
    }
    if (nkeys > argc - 3) nkeys = argc - 3;
    char nk[8];
    snprintf(nk, sizeof nk, "%ld", nkeys);
    argv[0] = "EVAL";
    argl[0] = 4;
    argv[1] = src;
    argl[1] = srclen;
    argv[2] = nk;
    argl[2] = strlen(nk);
    run(s, &out, argc, argv, argl);
    argv[0] = "EVAL_RO";
    argl[0] = 7;
    run(s, &out, argc, argv, argl);
    /* the same body as a library whose one function runs it */
    buf lib = {0};
    buf_adds(&lib, "#!lua name=fz\nredis.register_function('f', function(KEYS, ARGV)\n");
    buf_add(&lib, src, srclen);
    buf_adds(&lib, "\nend)\n");
    const char *largv[4] = {"FUNCTION", "LOAD", "REPLACE", lib.p};
    size_t largl[4] = {8, 4, 7, lib.len};
    run(s, &out, 4, largv, largl);
    if (out.len && out.p[0] == '$') {
        argv[0] = "FCALL";
        argl[0] = 5;
        argv[1] = "f";
        argl[1] = 1;
        run(s, &out, argc, argv, argl);
    }
    buf_free(&lib);
    run_str(s, &out, "SCRIPT", "FLUSH");
    run_str(s, &out, "FUNCTION", "FLUSH");
    engine_session_free(s);
    buf_free(&out);
    return 0;
}
