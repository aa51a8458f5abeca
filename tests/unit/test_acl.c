/* test_acl.c - unit tests of SHA-256 (FIPS 180-4 vectors) and of the ACL
 * model (src/cmd/acl_user.c, acl_check.c): rules in, descriptions out, the
 * permission check of commands and keys. No sockets. */
#include "cmd/acl.h"
#include "lib/buf.h"
#include "lib/sha256.h"
#include "server/config.h"
#include "server/engine.h"
#include <string.h>

#include "check.h"

static void test_sha256_vectors(void) {
    char h[65];
    sha256_hex("abc", 3, h);
    CHECK(!strcmp(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    sha256_hex("", 0, h);
    CHECK(!strcmp(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes: padding spills */
    sha256_hex(two, strlen(two), h);
    CHECK(!strcmp(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
}

static acl_user *user_with(const char *rules) {
    acl_user *u = acl_user_new("t", 1);
    char copy[512], *save = NULL, err[256];
    const char *ops[32];
    size_t lens[32];
    int n = 0, bad;
    snprintf(copy, sizeof copy, "%s", rules);
    for (char *op = strtok_r(copy, " ", &save); op && n < 32; op = strtok_r(NULL, " ", &save)) {
        ops[n] = op;
        lens[n++] = strlen(op);
    }
    if (acl_user_rules(u, n, ops, lens, &bad, err, sizeof err) < 0) { /* "(+set ~k)" spans two words here */
        acl_user_free(u);
        return NULL;
    }
    return u;
}

static int describes_as(const char *rules, const char *want) {
    acl_user *u = user_with(rules);
    if (!u) return 0;
    buf b = {0};
    acl_user_describe(u, &b);
    buf_addc(&b, 0);
    int ok = !strcmp(b.p, want);
    if (!ok) fprintf(stderr, "  %s -> %s\n", rules, b.p);
    buf_free(&b);
    acl_user_free(u);
    return ok;
}

static void test_descriptions(void) {
    CHECK(describes_as("on nopass ~* &* +@all", "on nopass ~* &* +@all"));
    CHECK(describes_as("+@all -@string +get", "off resetchannels +@all -@string +get"));
    CHECK(describes_as("-@all +client|id +client", "off resetchannels -@all +client"));
    CHECK(describes_as("%R~foo %W~foo %RW~bar %R~r*", "off ~foo ~bar %R~r* resetchannels -@all"));
    CHECK(describes_as("-@all +select|0", "off resetchannels -@all +select|0"));
    CHECK(describes_as("on >abc &ch", "on #ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad "
                                      "resetchannels &ch -@all"));
    CHECK(!user_with("allkeys ~foo"));
    CHECK(!user_with("+nosuchcommand"));
    CHECK(!user_with("%X~k"));
}

static int check(acl_user *u, int argc, const char **argv) {
    size_t argl[8];
    for (int i = 0; i < argc; i++)
        argl[i] = strlen(argv[i]);
    const command *c = cmd_lookup(argv[0], argl[0]);
    if (c && c->nsubs) c = cmd_lookup_sub(c, argv[1], argl[1]);
    int pos;
    return acl_check(u, c, argc, argv, argl, &pos);
}

static void test_check(void) {
    acl_user *u = user_with("on +@all %R~r* %W~w* ~rw:*");
    CHECK(check(u, 2, (const char *[]){"get", "r1"}) == ACL_OK);
    CHECK(check(u, 3, (const char *[]){"set", "r1", "v"}) == ACL_DENIED_KEY);
    CHECK(check(u, 3, (const char *[]){"set", "w1", "v"}) == ACL_OK);
    CHECK(check(u, 4, (const char *[]){"set", "w1", "v", "GET"}) == ACL_DENIED_KEY);
    CHECK(check(u, 2, (const char *[]){"strlen", "w1"}) == ACL_OK);
    CHECK(check(u, 3, (const char *[]){"copy", "r1", "w1"}) == ACL_OK);
    CHECK(check(u, 3, (const char *[]){"copy", "w1", "r1"}) == ACL_DENIED_KEY);
    CHECK(check(u, 3, (const char *[]){"mget", "rw:1", "rw:2"}) == ACL_OK);
    acl_user_free(u);
    u = user_with("on -@all +get (+set ~s*)");
    CHECK(check(u, 2, (const char *[]){"get", "x"}) == ACL_DENIED_KEY);
    CHECK(check(u, 3, (const char *[]){"set", "s1", "v"}) == ACL_OK);
    CHECK(check(u, 2, (const char *[]){"del", "s1"}) == ACL_DENIED_CMD);
    CHECK(check(u, 2, (const char *[]){"client", "id"}) == ACL_DENIED_CMD);
    acl_user_free(u);
    CHECK(acl_user_check_pass(acl_default_user(), "anything", 8));
    u = user_with("on >pw");
    CHECK(acl_user_check_pass(u, "pw", 2) && !acl_user_check_pass(u, "pW", 2) && !acl_user_check_pass(u, "p", 1));
    acl_user_free(u);
}

int main(void) {
    config_defaults();
    engine_init();
    test_sha256_vectors();
    test_descriptions();
    test_check();
    return check_report();
}
