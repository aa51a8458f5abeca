/* acl_file.c - the aclfile: one `user <name> <rule> ...` line per user,
 * blank lines and # comments allowed, quoting as in redis.conf. Loading is
 * all or nothing: every error is collected with its file and line, as
 * Redis reports them, and the users change only when there was none. A
 * file without the default user gives it its initial rules. ACL SAVE
 * writes a temporary file and renames it over the old one. */
#include "cmd/acl.h"
#include "lib/mem.h"
#include "proto/resp.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_ARGS 1024

static acl_user *fresh_default(void) {
    acl_user *d = acl_user_new("default", 7);
    static const char *const rules[] = {"+@all", "~*", "&*", "on", "nopass"};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        acl_user_rule(d, rules[i], strlen(rules[i]), NULL, 0);
    return d;
}

static void free_users(acl_user **u, int n) {
    for (int i = 0; i < n; i++)
        acl_user_free(u[i]);
    zfree(u);
}

int acl_file_parse_named(const char *fname, const char *text, size_t len, acl_user ***out, char *err, size_t el) {
    acl_user **us = NULL;
    int n = 0, cap = 0, lineno = 0;
    buf errors = {0}, tmp = {0};
    size_t *off = zmalloc(sizeof(size_t) * MAX_ARGS), *ln = zmalloc(sizeof(size_t) * MAX_ARGS);
    const char **argv = zmalloc(sizeof(char *) * MAX_ARGS);
    size_t pos = 0;
    while (pos < len) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl ? 1 : 0);
        lineno++;
        while (ll && (line[0] == ' ' || line[0] == '\t' || line[0] == '\r')) {
            line++;
            ll--;
        }
        while (ll && (line[ll - 1] == ' ' || line[ll - 1] == '\t' || line[ll - 1] == '\r'))
            ll--;
        if (ll == 0) continue; /* no comments: Redis 7.0 refuses them too */
        tmp.len = 0;
        int argc = resp_split_line(line, ll, &tmp, off, ln, MAX_ARGS);
        if (argc < 0) {
            buf_printf(&errors, "%s:%d: unbalanced quotes in acl line. ", fname, lineno);
            continue;
        }
        if (argc == 0) continue;
        for (int i = 0; i < argc; i++)
            argv[i] = tmp.p + off[i];
        if (!(ln[0] == 4 && !memcmp(argv[0], "user", 4)) || argc < 2) {
            buf_printf(&errors, "%s:%d should start with user keyword followed by the username. ", fname, lineno);
            continue;
        }
        if (!acl_name_ok(argv[1], ln[1])) {
            buf_printf(&errors, "%s:%d: Syntax error. ", fname, lineno);
            continue;
        }
        int dup = 0;
        for (int i = 0; i < n; i++)
            if (us[i]->namelen == ln[1] && !memcmp(us[i]->name, argv[1], ln[1])) dup = 1;
        if (dup) {
            buf_printf(&errors, "WARNING: Duplicate user '%.*s' found on line %d. ", (int)ln[1], argv[1], lineno);
            continue;
        }
        int open = -1;
        for (int i = 2; i < argc; i++) {
            if (open < 0 && ln[i] && argv[i][0] == '(' && argv[i][ln[i] - 1] != ')')
                open = i;
            else if (open >= 0 && ln[i] && argv[i][ln[i] - 1] == ')')
                open = -1;
        }
        if (open >= 0) {
            buf_printf(&errors, "%s:%d: Unmatched parenthesis in acl selector starting at '%.*s'. ", fname, lineno,
                       (int)ln[open], argv[open]);
            continue;
        }
        acl_user *u = acl_user_new(argv[1], ln[1]);
        char why[512];
        int bad = 0;
        if (acl_user_rules(u, argc - 2, argv + 2, ln + 2, &bad, why, sizeof why) < 0) {
            buf_printf(&errors, "%s:%d: Error in applying operation '%.*s': %s. ", fname, lineno, (int)ln[2 + bad],
                       argv[2 + bad], why);
            acl_user_free(u);
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            us = zrealloc(us, sizeof *us * (size_t)cap);
        }
        us[n++] = u;
    }
    zfree(off);
    zfree(ln);
    zfree(argv);
    buf_free(&tmp);
    if (errors.len) {
        buf_adds(&errors, "WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
        snprintf(err, el, "%.*s", (int)errors.len, errors.p);
        buf_free(&errors);
        free_users(us, n);
        return -1;
    }
    int has_default = 0;
    for (int i = 0; i < n; i++)
        if (us[i]->namelen == 7 && !memcmp(us[i]->name, "default", 7)) has_default = 1;
    if (!has_default) {
        us = zrealloc(us, sizeof *us * (size_t)(n + 1));
        us[n++] = fresh_default();
    }
    *out = us;
    return n;
}

int acl_file_parse(const char *text, size_t len, acl_user ***out, char *err, size_t el) {
    return acl_file_parse_named("aclfile", text, len, out, err, el);
}

int acl_file_load(const char *path, void (*kill)(acl_user *old, void *ud), void *ud, char *err, size_t el) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, el, "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
        return -1;
    }
    buf text = {0};
    char chunk[4096];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_add(&text, chunk, r);
    fclose(f);
    acl_user **us;
    int n = acl_file_parse_named(path, text.p ? text.p : "", text.len, &us, err, el);
    buf_free(&text);
    if (n < 0) return -1;
    acl_replace_all(us, n, kill, ud);
    zfree(us);
    return 0;
}

int acl_file_save(const char *path, char *err, size_t el) {
    buf b = {0};
    for (int i = 0; i < acl_count(); i++) {
        acl_describe_line(acl_at(i), &b);
        buf_addc(&b, '\n');
    }
    char tmpname[4200];
    snprintf(tmpname, sizeof tmpname, "%s.tmp-%d", path, (int)getpid());
    int fd = open(tmpname, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        snprintf(err, el, "Opening temp ACL file for ACL SAVE: %s", strerror(errno));
        buf_free(&b);
        return -1;
    }
    size_t done = 0;
    while (done < b.len) {
        ssize_t w = write(fd, b.p + done, b.len - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            snprintf(err, el, "Writing ACL file for ACL SAVE: %s", strerror(errno));
            close(fd);
            unlink(tmpname);
            buf_free(&b);
            return -1;
        }
        done += (size_t)w;
    }
    buf_free(&b);
    if (fsync(fd) < 0 || close(fd) < 0 || rename(tmpname, path) < 0) {
        snprintf(err, el, "Saving ACL file for ACL SAVE: %s", strerror(errno));
        unlink(tmpname);
        return -1;
    }
    return 0;
}
