/* fuzz_config.c - libFuzzer target for the configuration parser
 * (src/server/config.h): config file lines and `--name value` arguments.
 *
 * Byte 0 picks the mode. Even: the rest is a config file, written to a
 * private temporary file and passed as argv[1] (as `shoal-server FILE`).
 * Odd: the rest is an argument vector, one argument per line (the first is
 * forced to start with "--", so nothing ever reads stdin as `-`).
 * Each input starts from config_defaults(). config_load must return 0 or -1
 * with a message, never exit or crash. When a file loaded cleanly the
 * CONFIG REWRITE round trip is checked too: rewriting and loading the
 * rewritten file must give the same CONFIG GET value for every directive.
 * `dir` makes config_load chdir; the working directory is put back after
 * every input. */
#include "lib/buf.h"
#include "lib/mem.h"
#include "server/config.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ARGS 256

static char workdir[4096];
static char conf_path[4200];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    char tmpl[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(tmpl, sizeof tmpl, "%s/shoal-fuzz-config.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpl) || chdir(tmpl) != 0 || !getcwd(workdir, sizeof workdir)) abort();
    snprintf(conf_path, sizeof conf_path, "%s/fuzz.conf", workdir);
    return 0;
}

/* Back to the defaults. config_defaults() replaces every string except
 * `dir` (and config_load never frees config_file), so those two are
 * released here first. */
static void reset(void) {
    if (chdir(workdir) != 0) abort();
    free(cfg.dir_s);
    cfg.dir_s = NULL;
    free(cfg.config_file);
    cfg.config_file = NULL;
    config_defaults();
}

static void snapshot(buf *vals) {
    for (int i = 0; i < config_count(); i++) {
        vals[i].len = 0;
        config_value(i, &vals[i]);
        buf_addc(&vals[i], 0);
    }
}

static int load(int argc, char **argv, char *err, size_t el) {
    err[0] = 0;
    int rc = config_load(argc, argv, err, el);
    if (rc != 0 && (rc != -1 || err[0] == 0)) {
        fprintf(stderr, "fuzz_config: config_load returned %d with message '%s'\n", rc, err);
        abort();
    }
    return rc;
}

static void write_file(const uint8_t *d, size_t n) {
    FILE *f = fopen(conf_path, "w");
    if (!f || fwrite(d, 1, n, f) != n || fclose(f) != 0) abort();
}

/* A clean load, rewritten and loaded again, must read back the same. */
static void check_rewrite(void) {
    char err[1024];
    int n = config_count();
    buf *before = calloc((size_t)n, sizeof(buf)), *after = calloc((size_t)n, sizeof(buf));
    snapshot(before);
    if (config_rewrite(err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_config: CONFIG REWRITE failed: %s\n", err);
        abort();
    }
    reset();
    char *argv[2] = {"shoal-server", conf_path};
    if (load(2, argv, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_config: the rewritten file does not load: %s\n", err);
        abort();
    }
    snapshot(after);
    for (int i = 0; i < n; i++)
        if (strcmp(before[i].p, after[i].p) != 0) {
            fprintf(stderr, "fuzz_config: %s was '%s', after REWRITE '%s'\n", config_name(i), before[i].p, after[i].p);
            abort();
        }
    for (int i = 0; i < n; i++) {
        buf_free(&before[i]);
        buf_free(&after[i]);
    }
    free(before);
    free(after);
}

static void run_file(const uint8_t *d, size_t n) {
    char err[1024];
    write_file(d, n);
    char *argv[2] = {"shoal-server", conf_path};
    if (load(2, argv, err, sizeof err) == 0) check_rewrite();
}

static void run_args(const uint8_t *d, size_t n) {
    char err[1024];
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    argv[argc++] = strdup("shoal-server");
    const uint8_t *p = d, *end = d + n;
    while (p < end && argc < MAX_ARGS) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *a = malloc(len + 3);
        size_t at = 0;
        if (argc == 1 && (len < 2 || p[0] != '-' || p[1] != '-')) {
            a[at++] = '-';
            a[at++] = '-';
        }
        memcpy(a + at, p, len);
        a[at + len] = 0;
        argv[argc++] = a;
        p += len + (nl != NULL);
    }
    argv[argc] = NULL;
    load(argc, argv, err, sizeof err);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    reset();
    if (data[0] & 1)
        run_args(data + 1, size - 1);
    else
        run_file(data + 1, size - 1);
    /* Every directive must still print (CONFIG GET). */
    buf v = {0};
    for (int i = 0; i < config_count(); i++) {
        v.len = 0;
        config_value(i, &v);
    }
    buf_free(&v);
    if (chdir(workdir) != 0) abort();
    return 0;
}
