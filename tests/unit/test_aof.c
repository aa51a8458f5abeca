/* test_aof.c - unit tests of the AOF's pure parts and of its round trip
 * through the embedded engine: the command stream parser (every prefix of a
 * real stream is a clean stop or a short read, never a format error; bad
 * bytes are found at their offset), the manifest parser against
 * redis-server 7.0's text and each of its refusals, names that need
 * quoting, and commands logged by the engine (the forms of aof_log.c)
 * replayed into an empty keyspace by the loader. */
#include "lib/log.h"
#include "lib/mem.h"
#include "persist/aof.h"
#include "persist/aof_manifest.h"
#include "persist/aof_parse.h"
#include "proto/resp.h"
#include "server/config.h"
#include "server/engine.h"
#include "shard/shard.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static const char stream[] = "#TS:1700000000\r\n"
                             "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"
                             "*3\r\n$3\r\nset\r\n$1\r\na\r\n$0\r\n\r\n"
                             "*1\r\n$5\r\nMULTI\r\n"
                             "*3\r\n$4\r\nSADD\r\n$1\r\ns\r\n$4\r\na\r\nb\r\n" /* binary-safe arguments */
                             "*1\r\n$4\r\nEXEC\r\n";

static void test_parse_stream(void) {
    size_t n = sizeof stream - 1, pos = 0;
    aof_cmd c = {0};
    int cmds = 0, st;
    while ((st = aof_parse_next(stream, n, &pos, &c, NULL)) == AOFP_CMD)
        cmds++;
    CHECK(st == AOFP_END && pos == n && cmds == 5);
    /* the SADD member holds "\r\n" */
    pos = 0;
    for (int i = 0; i < 4; i++)
        aof_parse_next(stream, n, &pos, &c, NULL);
    CHECK(c.argc == 3 && c.argl[2] == 4 && !memcmp(c.argv[2], "a\r\nb", 4));
    /* every prefix: commands, then END (at a command boundary) or SHORT */
    for (size_t cut = 0; cut <= n; cut++) {
        pos = 0;
        while ((st = aof_parse_next(stream, cut, &pos, &c, NULL)) == AOFP_CMD) {
        }
        CHECK(st == AOFP_END || st == AOFP_SHORT);
        CHECK(pos <= cut);
    }
    aof_cmd_free(&c);
}

static int bad_at(const char *s, size_t *bad) {
    aof_cmd c = {0};
    size_t pos = 0;
    int st;
    while ((st = aof_parse_next(s, strlen(s), &pos, &c, bad)) == AOFP_CMD) {
    }
    aof_cmd_free(&c);
    return st;
}

static void test_parse_bad(void) {
    size_t bad = 0;
    CHECK(bad_at("*1\r\n$4\r\nPING\r\nxyz", &bad) == AOFP_BAD && bad == 14);
    CHECK(bad_at("*0\r\n", &bad) == AOFP_BAD);
    CHECK(bad_at("*-1\r\n", &bad) == AOFP_BAD && bad == 1);
    CHECK(bad_at("*1\r\n#4\r\nPING\r\n", &bad) == AOFP_BAD && bad == 4);
    CHECK(bad_at("*1\r\n$4\r\nPINGxx", &bad) == AOFP_BAD && bad == 12);
    CHECK(bad_at("*1\n$4\r\nPING\r\n", &bad) == AOFP_BAD && bad == 2);
    CHECK(bad_at("*1\r\r\n", &bad) == AOFP_BAD && bad == 3);
    CHECK(bad_at("*1234567890123456789\r\n", &bad) == AOFP_BAD);
    CHECK(bad_at("*1\r\n$4x\r\nPING\r\n", &bad) == AOFP_BAD && bad == 6);
    /* lengths beyond the input are a short read (a crash mid-write), as Redis sees them */
    CHECK(bad_at("*1\r\n$999999999\r\nPING\r\n", &bad) == AOFP_SHORT);
    CHECK(bad_at("*999999999\r\n$4\r\nPING\r\n", &bad) == AOFP_SHORT);
    CHECK(bad_at("#TS:1", &bad) == AOFP_SHORT);
    CHECK(bad_at("", &bad) == AOFP_END);
    CHECK(bad_at("#a\n#b\n", &bad) == AOFP_END);
}

static void test_put_command(void) {
    buf b = {0};
    const char *argv[2] = {"DEL", "k\r\n"};
    size_t argl[2] = {3, 3};
    aof_put_command(&b, 2, argv, argl);
    static const char want[] = "*2\r\n$3\r\nDEL\r\n$3\r\nk\r\n\r\n";
    CHECK(b.len == sizeof want - 1 && !memcmp(b.p, want, b.len));
    aof_cmd c = {0};
    size_t pos = 0;
    CHECK(aof_parse_next(b.p, b.len, &pos, &c, NULL) == AOFP_CMD && c.argc == 2 && c.argl[1] == 3);
    aof_cmd_free(&c);
    buf_free(&b);
}

static int manifest_err(const char *text, char *err, int *line) {
    aof_manifest m;
    int rc = aof_manifest_parse(text, strlen(text), &m, line, err, 256);
    aof_manifest_free(&m);
    return rc;
}

static void test_manifest(void) {
    const char *redis = "file appendonly.aof.1.base.rdb seq 1 type b\n"
                        "file appendonly.aof.1.incr.aof seq 1 type i\n";
    aof_manifest m;
    char err[256];
    int line;
    CHECK(aof_manifest_parse(redis, strlen(redis), &m, &line, err, sizeof err) == 0);
    CHECK(m.base.name && !strcmp(m.base.name, "appendonly.aof.1.base.rdb") && m.base.seq == 1);
    CHECK(m.nincr == 1 && !strcmp(m.incr[0].name, "appendonly.aof.1.incr.aof") && m.incr_seq == 1);
    buf out = {0};
    aof_manifest_format(&m, &out);
    CHECK(out.len == strlen(redis) && !memcmp(out.p, redis, out.len));
    aof_manifest_free(&m);

    /* history files, comments, extra keys, any order of the pairs */
    const char *more = "# comment\nfile a.2.base.rdb seq 2 type b\nfile a.1.base.rdb seq 1 type h\n"
                       "seq 3 type i file a.3.incr.aof future x\nfile a.4.incr.aof seq 4 type i\n";
    CHECK(aof_manifest_parse(more, strlen(more), &m, &line, err, sizeof err) == 0);
    CHECK(m.nhist == 1 && m.nincr == 2 && m.incr[1].seq == 4 && m.base_seq == 2);
    out.len = 0;
    aof_manifest_format(&m, &out);
    CHECK(out.len > 0 && !memcmp(out.p, "file a.2.base.rdb seq 2 type b\nfile a.1.base.rdb seq 1 type h\n", 62));
    aof_manifest_free(&m);

    /* a name that needs quoting goes out quoted and comes back the same */
    memset(&m, 0, sizeof m);
    aof_manifest_set_base(&m, "my file\"x", 7);
    out.len = 0;
    aof_manifest_format(&m, &out);
    CHECK(out.len == strlen("file \"my file\\\"x\" seq 7 type b\n"));
    aof_manifest m2;
    CHECK(aof_manifest_parse(out.p, out.len, &m2, &line, err, sizeof err) == 0 && !strcmp(m2.base.name, "my file\"x"));
    aof_manifest_free(&m2);
    aof_manifest_free(&m);
    buf_free(&out);

    /* refusals, with redis-server's reasons */
    CHECK(manifest_err("", err, &line) < 0 && !strcmp(err, "Found an empty AOF manifest"));
    CHECK(manifest_err("file a seq 1 type b", err, &line) < 0 &&
          !strcmp(err, "The AOF manifest file contains too long line"));
    CHECK(manifest_err("\n", err, &line) < 0 && !strcmp(err, "Invalid AOF manifest file format") && line == 1);
    CHECK(manifest_err("file a seq 1\n", err, &line) < 0 && !strcmp(err, "Invalid AOF manifest file format"));
    CHECK(manifest_err("file a seq 1 type b x\n", err, &line) < 0);
    CHECK(manifest_err("file a seq 0 type b\n", err, &line) < 0);
    CHECK(manifest_err("file a seq x type b\n", err, &line) < 0);
    CHECK(manifest_err("file d/a seq 1 type b\n", err, &line) < 0 &&
          !strcmp(err, "File can't be a path, just a filename"));
    CHECK(manifest_err("file a seq 1 type b\nfile b seq 2 type b\n", err, &line) < 0 &&
          !strcmp(err, "Found duplicate base file information") && line == 2);
    CHECK(manifest_err("file a seq 2 type i\nfile b seq 2 type i\n", err, &line) < 0 &&
          !strcmp(err, "Found a non-monotonic sequence number"));
    CHECK(manifest_err("file a seq 1 type x\n", err, &line) < 0 && !strcmp(err, "Unknown AOF file type"));
    CHECK(manifest_err("file \"a seq 1 type b\n", err, &line) < 0);
    char longline[1100];
    memset(longline, 'x', sizeof longline);
    memcpy(longline + sizeof longline - 2, "\n", 2);
    CHECK(manifest_err(longline, err, &line) < 0 && !strcmp(err, "The AOF manifest file contains too long line"));

    buf name = {0};
    aof_name_base(&name, "appendonly.aof", 3, 1);
    CHECK(!strcmp(name.p, "appendonly.aof.3.base.rdb"));
    aof_name_incr(&name, "appendonly.aof", 12);
    CHECK(!strcmp(name.p, "appendonly.aof.12.incr.aof"));
    aof_name_manifest(&name, "x.aof");
    CHECK(!strcmp(name.p, "x.aof.manifest"));
    buf_free(&name);
}

/* ---- logging through the engine and loading back ---- */

static session *sess;
static buf out;

/* Runs a command line split as redis-cli does; the reply is in out. */
static void run(const char *line) {
    buf words = {0};
    size_t off[16], len[16];
    int argc = resp_split_line(line, strlen(line), &words, off, len, 16);
    const char *argv[16];
    for (int i = 0; i < argc; i++)
        argv[i] = words.p + off[i];
    out.len = 0;
    engine_exec(sess, argc, argv, len);
    buf_free(&words);
}

static const char *reply(const char *line) {
    run(line);
    buf_addc(&out, 0);
    out.len--;
    return out.p;
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    static char data[1 << 16];
    *n = f ? fread(data, 1, sizeof data - 1, f) : 0;
    if (f) fclose(f);
    data[*n] = 0;
    return data;
}

static void test_log_and_load(void) {
    free(cfg.appenddirname_s);
    cfg.appenddirname_s = strdup(".");
    int fd = open("t.1.incr.aof", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    aof_writer_open(fd, 0, 0);
    CHECK(aof_active());
    run("SET a 1");
    run("SET b v EX 1000");
    run("SETEX c 1000 v");
    run("EXPIRE a 500");
    run("INCRBYFLOAT f 1.5");
    run("SADD s x y z");
    run("SPOP s");
    run("RPUSH l 1 2 3");
    run("BLPOP l 0");
    run("SELECT 3");
    run("HSET h f v");
    run("DEL nokey");  /* nothing changed: not logged */
    run("GET a");      /* a read: not logged */
    run("SET x y XX"); /* not set, but logged as it is (harmless) */
    run("SELECT 0");
    run("GETDEL a");
    CHECK(aof_before_send(shards[0]) == 0);
    size_t n;
    const char *text = slurp("t.1.incr.aof", &n);
    CHECK(strstr(text, "$9\r\nPEXPIREAT\r\n$1\r\na\r\n") != NULL);
    CHECK(strstr(text, "$3\r\nSET\r\n$1\r\nb\r\n$1\r\nv\r\n$4\r\nPXAT\r\n") != NULL);
    CHECK(strstr(text, "$3\r\nSET\r\n$1\r\nc\r\n$1\r\nv\r\n$4\r\nPXAT\r\n") != NULL);
    CHECK(strstr(text, "$3\r\nSET\r\n$1\r\nf\r\n$3\r\n1.5\r\n$7\r\nKEEPTTL\r\n") != NULL);
    CHECK(strstr(text, "$4\r\nSREM\r\n$1\r\ns\r\n") != NULL);
    CHECK(strstr(text, "*2\r\n$4\r\nLPOP\r\n$1\r\nl\r\n") != NULL);
    CHECK(strstr(text, "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*4\r\n$4\r\nHSET") != NULL);
    CHECK(strstr(text, "nokey") == NULL && strstr(text, "GET\r\n") == NULL);
    CHECK(strstr(text, "*2\r\n$3\r\nDEL\r\n$1\r\na\r\n") != NULL);
    aof_writer_close();
    CHECK(!aof_active());

    /* an empty keyspace, then the loader: the same data, TTLs absolute */
    long long ttl_b = atoll(reply("PTTL b") + 1);
    const char *smembers = reply("SCARD s");
    CHECK(!strcmp(smembers, ":2\r\n"));
    run("FLUSHALL"); /* not logged: the AOF is off */
    aof_manifest m = {0};
    aof_manifest_add_incr(&m, "t.1.incr.aof", 1);
    uint64_t base = 0;
    CHECK(aof_load_files(&m, 1, &base) == 0);
    aof_manifest_free(&m);
    CHECK(!strcmp(reply("EXISTS a"), ":0\r\n"));
    CHECK(!strcmp(reply("GET f"), "$3\r\n1.5\r\n"));
    CHECK(!strcmp(reply("SCARD s"), ":2\r\n"));
    CHECK(!strcmp(reply("LRANGE l 0 -1"), "*2\r\n$1\r\n2\r\n$1\r\n3\r\n"));
    long long ttl_after = atoll(reply("PTTL b") + 1);
    CHECK(ttl_after <= ttl_b && ttl_after > ttl_b - 5000);
    run("SELECT 3");
    CHECK(!strcmp(reply("HGET h f"), "$1\r\nv\r\n"));
    run("SELECT 0");
    unlink("t.1.incr.aof");
    run("FLUSHALL");
}

int main(void) {
    char dir[] = "/tmp/shoal-unit-aof-XXXXXX";
    if (!mkdtemp(dir) || chdir(dir) != 0) return 1;
    engine_open(1);
    log_set_level(LOG_WARNING);
    sess = engine_session(&out);
    test_parse_stream();
    test_parse_bad();
    test_put_command();
    test_manifest();
    test_log_and_load();
    engine_session_free(sess);
    buf_free(&out);
    rmdir(dir);
    return check_report();
}
