/* test_script.c - SHA-1 against the standard's test vectors, and the
 * scripting engine run inline (a one-shard engine): conversions, the
 * sandbox, struct and cmsgpack on hostile input. */
#include "check.h"
#include "lib/sha1.h"
#include "server/engine.h"
#include <string.h>

static void test_sha1(void) {
    char hex[41];
    sha1_text("", 0, hex);
    CHECK(!strcmp(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709"));
    sha1_text("abc", 3, hex);
    CHECK(!strcmp(hex, "a9993e364706816aba3e25717850c26c9cd0d89d"));
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes: the padding spills */
    sha1_text(two, strlen(two), hex);
    CHECK(!strcmp(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"));
    static char million[1000000];
    memset(million, 'a', sizeof million);
    sha1_text(million, sizeof million, hex);
    CHECK(!strcmp(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"));
}

static buf out;

static const char *eval(session *s, const char *body) {
    const char *argv[3] = {"EVAL", body, "0"};
    size_t argl[3] = {4, strlen(body), 1};
    out.len = 0;
    engine_exec(s, 3, argv, argl);
    buf_addc(&out, 0);
    return out.p;
}

static void test_engine(void) {
    session *s = engine_session(&out);
    CHECK(!strcmp(eval(s, "return {1, 'a', {ok='x'}, {err='E y'}, 3.7, true, false}"),
                  "*7\r\n:1\r\n$1\r\na\r\n+x\r\n-E y\r\n:3\r\n:1\r\n$-1\r\n"));
    CHECK(!strcmp(eval(s, "return redis.call('set', 'k', 'v')"), "+OK\r\n"));
    CHECK(!strcmp(eval(s, "return redis.call('get', 'k')"), "$1\r\nv\r\n"));
    CHECK(!strncmp(eval(s, "x = 1"), "-ERR user_script:1: Attempt to modify a readonly table", 54));
    CHECK(!strncmp(eval(s, "return os"), "-ERR user_script:1: Script attempted to access nonexistent global variable 'os'", 79));
    CHECK(eval(s, "rawset(_G, 'a', 1)")[0] == '-');
    CHECK(eval(s, "return loadstring(string.dump(function() end))")[0] == '$'); /* nil, refused: a null bulk */
    CHECK(eval(s, "return struct.pack('i40', 1)")[0] == '-');
    CHECK(eval(s, "return struct.unpack('c2147483647', 'x')")[0] == '-');
    CHECK(eval(s, "return cmsgpack.unpack(string.rep('\\145', 5000))")[0] == '-');
    CHECK(!strcmp(eval(s, "return cmsgpack.unpack(cmsgpack.pack({1, {2, 'x'}}))[2][2]"), "$1\r\nx\r\n"));
    CHECK(!strcmp(eval(s, "return struct.unpack('>H', '\\1\\2')"), ":258\r\n"));
    CHECK(eval(s, "local t = {} t[1] = t return t")[0] == '-'); /* too deep: an error, not a crash */
    engine_session_free(s);
}

int main(void) {
    test_sha1();
    engine_init();
    engine_open(1);
    test_engine();
    return check_report();
}
