/* acl.h - users, their rules, and the permission check of every command
 * (Redis 7.0's ACL, selectors included).
 *
 * A user has passwords (kept only as SHA-256 hex), flags, and selectors:
 * sels[0] is the root selector (the rules given outside parentheses), the
 * others come from "(...)" rules. A selector allows a set of commands (a
 * bitmap over cmd_index, plus one bit meaning "commands added later", set
 * only by +@all), key patterns with read/write permissions, and channel
 * patterns. A command is allowed when one selector allows the command and
 * every key and channel it names.
 *
 * Threads: users are read by every shard thread (AUTH, the check in
 * dispatch) and changed only by the ACL commands and CONFIG SET
 * requirepass, which run as whole-shard transactions over every shard (no
 * shard runs anything else meanwhile), at startup, or with one shard. So
 * readers never see a half-changed user. The ACL LOG has its own mutex.
 *
 * acl_user.c: the model (rules in, descriptions out: a pure parser, fuzzed
 * by tests/fuzz/fuzz_acl.c); acl_check.c: the check and each key's access;
 * acl_file.c: the aclfile and `user` config lines; acl.c: ACL and AUTH. */
#ifndef SHOAL_ACL_H
#define SHOAL_ACL_H
#include "cmd/cmd.h"
#include "lib/buf.h"
#include "lib/util.h"
#include "net/conn.h"
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { ACL_R = 1, ACL_W = 2, ACL_RW = 3 };

/* Selector flags. */
enum { SEL_ALLKEYS = 1, SEL_ALLCHANNELS = 2, SEL_ALLCOMMANDS = 4 };
/* User flags. */
enum {
    USER_ON = 1,
    USER_NOPASS = 2,
    USER_SANITIZE = 4,
    USER_SKIP_SANITIZE = 8,
    USER_ALLPERM = 16, /* derived: the root selector allows everything (no check needed) */
};

typedef struct acl_pat {
    char *p;
    size_t len;
    int flags; /* ACL_R | ACL_W (keys); channels use ACL_RW */
    int kind;  /* PAT_*: how to match it cheaply */
} acl_pat;

/* Most patterns are a literal ("user:1") or a literal and one trailing
 * star ("user:*"): those compare bytes instead of running the glob. */
enum { PAT_GLOB, PAT_EXACT, PAT_PREFIX };
static inline int acl_pat_match(const acl_pat *p, const char *s, size_t n) {
    if (p->kind == PAT_PREFIX) return n >= p->len - 1 && !memcmp(p->p, s, p->len - 1);
    if (p->kind == PAT_EXACT) return n == p->len && !memcmp(p->p, s, n);
    return glob_match(p->p, p->len, s, n, 0);
}

typedef struct acl_sel {
    int flags;         /* SEL_* */
    uint64_t *bits;    /* acl_nbits() bits: one per cmd_index, then the future-commands bit */
    char ***firstargs; /* per cmd_index: NULL or a NULL-ended list of allowed first arguments */
    acl_pat *keys;
    int nkeys;
    acl_pat *chans;
    int nchans;
} acl_sel;

typedef struct acl_user {
    char *name;
    size_t namelen;
    int flags;        /* USER_* */
    char (*pass)[65]; /* SHA-256 hex of each password */
    int npass;
    acl_sel **sels; /* sels[0]: root */
    int nsels;
} acl_user;

/* Results of the check, in Redis's order of relevance. */
enum { ACL_OK = 0, ACL_DENIED_CMD = 1, ACL_DENIED_KEY = 2, ACL_DENIED_AUTH = 3, ACL_DENIED_CHANNEL = 4 };

/* ---- the model (acl_user.c) ---- */
/* Creates the default user and the empty table. Call after cmd_table_init. */
void acl_init(void);
acl_user *acl_default_user(void);
acl_user *acl_find(const char *name, size_t len);
/* A new user, off, with no permissions (not in the table). */
acl_user *acl_user_new(const char *name, size_t len);
void acl_user_free(acl_user *u);
acl_user *acl_user_copy(const acl_user *u);
/* Applies one rule ("on", ">pass", "+@read", "(~k +get)", ...). 0 ok; -1
 * with Redis's reason in err ("Syntax error", ...). */
int acl_user_rule(acl_user *u, const char *op, size_t len, char *err, size_t errlen);
/* Applies rules one after the other; on an error, *bad gets the index of
 * the failing rule. The user may be half changed then: callers work on a
 * copy. Rules of a selector given over several words are joined first. */
int acl_user_rules(acl_user *u, int n, const char **ops, const size_t *lens, int *bad, char *err, size_t errlen);
/* Recomputes the derived flags (USER_ALLPERM); the setters call it. */
void acl_user_refresh(acl_user *u);
/* "on nopass ~* &* +@all" as ACL LIST shows a user (after "user <name> "). */
void acl_user_describe(const acl_user *u, buf *out);
/* One selector's parts, as ACL GETUSER shows them. */
void acl_sel_commands(const acl_sel *s, buf *out);
void acl_sel_keys(const acl_sel *s, buf *out);
void acl_sel_channels(const acl_sel *s, buf *out);
/* The table: sorted by name. */
int acl_count(void);
acl_user *acl_at(int i);
/* Puts u in the table; when a user of that name exists, it takes u's
 * content (and keeps its address, which sessions hold) and u is freed.
 * Returns NULL. */
acl_user *acl_put(acl_user *u);
/* Takes the user out of the table (not the default). */
int acl_remove(const char *name, size_t len);
/* Replaces the whole table with users[0..n) (which must hold "default");
 * the previous users but the default are freed after kill(u) was called
 * for each, so sessions can be moved off them. */
void acl_replace_all(acl_user **users, int n, void (*kill)(acl_user *old, void *ud), void *ud);
/* A name is valid when it has no spaces or NULs (Redis's rule). */
int acl_name_ok(const char *name, size_t len);
/* Constant-time check of a password against a user (SHA-256 of it against
 * every stored hash). 1 when it authenticates (the user is on, and nopass
 * or a hash matches). */
int acl_user_check_pass(const acl_user *u, const char *pass, size_t len);

/* ---- the check (acl_check.c) ---- */
/* Per-command data for the check (key access flags); after acl_init. */
void acl_check_init(void);
/* 1 for SORT, 2 for SORT_RO, else 0 (a pointer compare: every call of a
 * restricted user asks). */
int acl_sort_kind(const command *cmd);
/* Is the command allowed for u with these arguments? ACL_OK or the reason;
 * *errpos gets the argv index of the refused key or channel. */
int acl_check(const acl_user *u, const command *cmd, int argc, const char **argv, const size_t *argl, int *errpos);
/* The NOPERM error text for a check result. */
void acl_denied_text(int why, const command *cmd, const char *obj, size_t objlen, char *err, size_t errlen);
/* A selector of u allows cmd and may read every key (SORT's BY/GET). */
int acl_full_key_read(const acl_user *u, const command *cmd, int argc, const char **argv, const size_t *argl);
/* Pub/sub's hook: may u use this channel (pattern: a PSUBSCRIBE pattern,
 * which must be allowed literally)? */
int acl_channel_ok(const acl_user *u, const char *ch, size_t len, int pattern);

/* Connection state: the session's user (NULL in the embedded engine and
 * the AOF loader: no checks) and whether it authenticated. */
static inline acl_user *acl_sess_user(const session *s) { return (acl_user *)s->user; }

/* AUTH's check for session s: on success the session is u's and 1 comes
 * back; a failure is logged (reason auth) and gives 0. */
int acl_auth(session *s, const char *user, size_t ul, const char *pass, size_t pl);
/* Is argv[i] of this command a secret that the slow log shows as
 * "(redacted)" (AUTH's arguments, HELLO's AUTH pair, CONFIG SET
 * requirepass's value)? */
int acl_redact_arg(const command *cmd, int argc, const char **argv, const size_t *argl, int i);
/* RESET: back to the default user, authenticated as a new connection is. */
void acl_sess_reset(session *s);
/* "user <name> <rules>" (ACL LIST, ACL SAVE). */
void acl_describe_line(const acl_user *u, buf *b);
/* The fast path of the dispatcher: nothing to check for this session. */
static inline int acl_sess_free_pass(const session *s) {
    return !s->user || (s->authed && (s->user->flags & USER_ALLPERM));
}

/* ---- the log (acl.c) ---- */
enum { ACL_CTX_TOPLEVEL, ACL_CTX_MULTI, ACL_CTX_LUA, ACL_CTX_MODULE };
/* Adds (or counts again) a denial. obj: the command name, key, channel or
 * username; Any thread. */
void acl_log_add(int why, int context, const session *s, const char *username, const char *obj, size_t objlen);
/* The dispatcher's check of a session's command: 0 to run it, else the
 * error text is in err (NOAUTH or NOPERM, logged). */
int acl_gate(session *s, const command *cmd, int argc, const char **argv, const size_t *argl, char *err, size_t errlen);
/* Reads requirepass, aclfile and the `user` lines at startup. 0 ok, -1
 * with the reason in err. */
int acl_startup(char *err, size_t errlen);

/* ---- the aclfile (acl_file.c) ---- */
/* Parses the text of an aclfile into users (the table is not touched).
 * Returns the count and *out (zmalloc'd array), or -1 with Redis's error
 * text in err. */
int acl_file_parse(const char *text, size_t len, acl_user ***out, char *err, size_t errlen);
/* The same, naming fname in errors ("<fname>:<line>: ..."). */
int acl_file_parse_named(const char *fname, const char *text, size_t len, acl_user ***out, char *err, size_t errlen);
/* Loads path and replaces the table (ACL LOAD, startup); -1 and err. */
int acl_file_load(const char *path, void (*kill)(acl_user *old, void *ud), void *ud, char *err, size_t errlen);
/* Writes every user to path (ACL SAVE); -1 and err. */
int acl_file_save(const char *path, char *err, size_t errlen);
#endif
