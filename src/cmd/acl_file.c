/* acl_file.c - the aclfile: one `user <name> <rule> ...` line per user,
 * words separated by single spaces (no quoting, no comments: Redis 7.0's
 * loader refuses a # line), blank lines allowed. Loading is
 * all or nothing: every error is collected with its file and line, as
 * Redis reports them, and the users change only when there was none. A
 * file without the default user gives it its initial rules. ACL SAVE
 * writes a temporary file and renames it over the old one. */
#include "cmd/acl.h"
#include "lib/mem.h"
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

/* Splits s[0..n) at every single space, as Redis's loader does (no
 * quoting: `~a"b` is the pattern a"b); consecutive spaces give empty
 * words, which are no-ops as rules. Returns the count (at most max). */
static int split_spaces(const char *s, size_t n, const char **argv, size_t *argl, int max) {
    int argc = 0;
    size_t at = 0;
    while (argc < max) {
        const char *sp = memchr(s + at, ' ', n - at);
        size_t l = sp ? (size_t)(sp - (s + at)) : n - at;
        argv[argc] = s + at;
        argl[argc++] = l;
        if (!sp) break;
        at += l + 1;
    }
    return argc;
}

static int trim_char(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'; }

int acl_file_parse_named(const char *fname, const char *text, size_t len, acl_user ***out, char *err, size_t el) {
    acl_user **us = NULL;
    int n = 0, cap = 0, lineno = 0;
    buf errors = {0};
    size_t *ln = zmalloc(sizeof(size_t) * MAX_ARGS);
    const char **argv = zmalloc(sizeof(char *) * MAX_ARGS);
    size_t pos = 0;
    while (pos < len) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl ? 1 : 0);
        lineno++;
        while (ll && trim_char(line[0])) {
            line++;
            ll--;
        }
        while (ll && trim_char(line[ll - 1]))
            ll--;
        if (ll == 0) continue; /* no comments: Redis 7.0 refuses them too */
        int argc = split_spaces(line, ll, argv, ln, MAX_ARGS);
        if (!(ln[0] == 4 && !memcmp(argv[0], "user", 4)) || argc < 2) {
            buf_printf(&errors, "%s:%d should start with user keyword followed by the username. ", fname, lineno);
            continue;
        }
        if (!acl_name_ok(argv[1], ln[1])) {
            buf_printf(&errors, "%s:%d: username '%.*s' contains invalid characters. ", fname, lineno, (int)ln[1],
                       argv[1]);
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
        /* Every rule is tried; an unknown command or category is named
         * (nothing secret in it), of other errors only the first is given,
         * as Redis words them. */
        acl_user *u = acl_user_new(argv[1], ln[1]);
        int bad_line = 0, said = 0;
        for (int i = 2; i < argc; i++) {
            int j = i;
            if (ln[i] && argv[i][0] == '(' && argv[i][ln[i] - 1] != ')')
                while (j + 1 < argc && !(ln[j] && argv[j][ln[j] - 1] == ')' && j > i))
                    j++;
            char why[512];
            int bad;
            if (acl_user_rules(u, j - i + 1, argv + i, ln + i, &bad, why, sizeof why) < 0) {
                bad_line = 1;
                if (!strcmp(why, "Unknown command or category name in ACL"))
                    buf_printf(&errors, "%s:%d: Error in applying operation '%.*s': %s. ", fname, lineno, (int)ln[i],
                               argv[i], why);
                else if (!said++)
                    buf_printf(&errors, "%s:%d: %s. ", fname, lineno, why);
            }
            i = j;
        }
        if (bad_line) {
            acl_user_free(u);
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            us = zrealloc(us, sizeof *us * (size_t)cap);
        }
        us[n++] = u;
    }
    zfree(ln);
    zfree(argv);
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
