/* script_msgpack.c - the `cmsgpack` library of Redis's Lua: pack(...),
 * unpack(s), unpack_one(s [, offset]), unpack_limit(s, limit [, offset]),
 * with the encodings Redis's library chooses (the smallest integer form,
 * float32 when exact, str8/16/32, a table is an array when its keys are
 * exactly 1..n, nesting past 16 levels packs as nil). Decoding checks every
 * length against the input and bounds the nesting, so truncated or hostile
 * input is an error, never a read past the end or a deep C recursion. */
#include "lib/buf.h"
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum { PACK_MAX_NESTING = 16, UNPACK_MAX_NESTING = 1000 };

/* ---- encoding (into a C buffer: luaL_Buffer needs the stack to itself) ---- */

static void put(buf *b, const void *p, size_t n) { buf_add(b, p, n); }

static void put_be(buf *b, unsigned char tag, uint64_t v, int bytes) {
    unsigned char t[9];
    t[0] = tag;
    for (int i = 0; i < bytes; i++) t[1 + i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    put(b, t, (size_t)bytes + 1);
}

static void put_byte(buf *b, int c) { buf_addc(b, (char)c); }

static void enc_int(buf *b, int64_t n) {
    if (n >= 0) {
        if (n <= 127) put_byte(b, (int)n);
        else if (n <= 0xff) put_be(b, 0xcc, (uint64_t)n, 1);
        else if (n <= 0xffff) put_be(b, 0xcd, (uint64_t)n, 2);
        else if (n <= 0xffffffffLL) put_be(b, 0xce, (uint64_t)n, 4);
        else put_be(b, 0xcf, (uint64_t)n, 8);
    } else {
        if (n >= -32) put_byte(b, (int)(0xe0 | (n + 32)));
        else if (n >= -128) put_be(b, 0xd0, (uint64_t)n, 1);
        else if (n >= -32768) put_be(b, 0xd1, (uint64_t)n, 2);
        else if (n >= -2147483648LL) put_be(b, 0xd2, (uint64_t)n, 4);
        else put_be(b, 0xd3, (uint64_t)n, 8);
    }
}

static void enc_number(buf *b, lua_Number n) {
    if (isfinite(n) && n == floor(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0) {
        enc_int(b, (int64_t)n);
        return;
    }
    float f = (float)n;
    if ((lua_Number)f == n || isnan(n)) {
        uint32_t u;
        memcpy(&u, &f, 4);
        put_be(b, 0xca, u, 4);
    } else {
        uint64_t u;
        memcpy(&u, &n, 8);
        put_be(b, 0xcb, u, 8);
    }
}

static void enc_len(buf *b, size_t len, unsigned char fix, size_t fixmax, unsigned char t8, unsigned char t16,
                    unsigned char t32) {
    if (len <= fixmax) put_byte(b, (int)(fix | len));
    else if (t8 && len <= 0xff) put_be(b, t8, len, 1);
    else if (len <= 0xffff) put_be(b, t16, len, 2);
    else put_be(b, t32, len, 4);
}

/* The length n when the table at idx is an array 1..n, else -1. */
static long array_len(lua_State *L, int idx) {
    long count = 0;
    lua_Number max = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TNUMBER) {
            lua_pop(L, 1);
            return -1;
        }
        lua_Number k = lua_tonumber(L, -1);
        if (k <= 0 || k != floor(k)) {
            lua_pop(L, 1);
            return -1;
        }
        if (k > max) max = k;
        count++;
    }
    return max == (lua_Number)count ? count : -1;
}

static void encode(lua_State *L, buf *b, int level);

static void encode_table(lua_State *L, buf *b, int level) {
    int t = lua_gettop(L);
    long n = array_len(L, t);
    if (n >= 0) {
        enc_len(b, (size_t)n, 0x90, 15, 0, 0xdc, 0xdd);
        for (long i = 1; i <= n; i++) {
            lua_rawgeti(L, t, (int)i);
            encode(L, b, level + 1);
        }
    } else {
        size_t count = 0;
        lua_pushnil(L);
        while (lua_next(L, t)) {
            lua_pop(L, 1);
            count++;
        }
        enc_len(b, count, 0x80, 15, 0, 0xde, 0xdf);
        lua_pushnil(L);
        while (lua_next(L, t)) {
            lua_pushvalue(L, -2);
            encode(L, b, level + 1); /* key */
            encode(L, b, level + 1); /* value */
        }
    }
}

/* Encodes and pops the value on top of the stack. */
static void encode(lua_State *L, buf *b, int level) {
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        enc_len(b, len, 0xa0, 31, 0xd9, 0xda, 0xdb);
        put(b, s, len);
        break;
    }
    case LUA_TBOOLEAN: put_byte(b, lua_toboolean(L, -1) ? 0xc3 : 0xc2); break;
    case LUA_TNUMBER: enc_number(b, lua_tonumber(L, -1)); break;
    case LUA_TTABLE:
        if (level >= PACK_MAX_NESTING || !lua_checkstack(L, 8)) put_byte(b, 0xc0);
        else encode_table(L, b, level);
        break;
    default: put_byte(b, 0xc0); break;
    }
    lua_pop(L, 1);
}

static int mp_pack(lua_State *L) {
    int n = lua_gettop(L);
    if (n == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    buf b = {0};
    for (int i = 1; i <= n; i++) {
        lua_pushvalue(L, i);
        encode(L, &b, 0);
    }
    lua_pushlstring(L, b.p ? b.p : "", b.len);
    buf_free(&b);
    return 1;
}

/* ---- decoding ---- */

typedef struct cursor {
    const unsigned char *p;
    size_t left;
    int err;
} cursor;

static uint64_t get_be(cursor *c, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = (v << 8) | c->p[i];
    c->p += bytes;
    c->left -= (size_t)bytes;
    return v;
}

static int need(cursor *c, size_t n) {
    if (c->left < n) {
        c->err = 1;
        return 0;
    }
    return 1;
}

static void decode(lua_State *L, cursor *c, int depth);

static void decode_array(lua_State *L, cursor *c, size_t n, int depth) {
    lua_newtable(L);
    for (size_t i = 0; i < n && !c->err; i++) {
        decode(L, c, depth + 1);
        if (c->err) break;
        lua_rawseti(L, -2, (int)i + 1);
    }
}

static void decode_map(lua_State *L, cursor *c, size_t n, int depth) {
    lua_newtable(L);
    for (size_t i = 0; i < n && !c->err; i++) {
        decode(L, c, depth + 1);
        if (c->err) break;
        decode(L, c, depth + 1);
        if (c->err) break;
        lua_settable(L, -3);
    }
}

static void decode_str(lua_State *L, cursor *c, size_t n) {
    if (!need(c, n)) return;
    lua_pushlstring(L, (const char *)c->p, n);
    c->p += n;
    c->left -= n;
}

static void decode(lua_State *L, cursor *c, int depth) {
    if (depth > UNPACK_MAX_NESTING || !lua_checkstack(L, 8)) {
        c->err = 2;
        return;
    }
    if (!need(c, 1)) return;
    unsigned char t = *c->p++;
    c->left--;
    if (t <= 0x7f) {
        lua_pushnumber(L, t);
    } else if ((t & 0xf0) == 0x80) {
        decode_map(L, c, t & 0x0f, depth);
    } else if ((t & 0xf0) == 0x90) {
        decode_array(L, c, t & 0x0f, depth);
    } else if ((t & 0xe0) == 0xa0) {
        decode_str(L, c, t & 0x1f);
    } else if (t >= 0xe0) {
        lua_pushnumber(L, (int8_t)t);
    } else {
        switch (t) {
        case 0xc0: lua_pushnil(L); break;
        case 0xc2: lua_pushboolean(L, 0); break;
        case 0xc3: lua_pushboolean(L, 1); break;
        case 0xc4:
        case 0xd9:
            if (need(c, 1)) decode_str(L, c, (size_t)get_be(c, 1));
            break;
        case 0xc5:
        case 0xda:
            if (need(c, 2)) decode_str(L, c, (size_t)get_be(c, 2));
            break;
        case 0xc6:
        case 0xdb:
            if (need(c, 4)) decode_str(L, c, (size_t)get_be(c, 4));
            break;
        case 0xca:
            if (need(c, 4)) {
                uint32_t u = (uint32_t)get_be(c, 4);
                float f;
                memcpy(&f, &u, 4);
                lua_pushnumber(L, f);
            }
            break;
        case 0xcb:
            if (need(c, 8)) {
                uint64_t u = get_be(c, 8);
                double d;
                memcpy(&d, &u, 8);
                lua_pushnumber(L, d);
            }
            break;
        case 0xcc: if (need(c, 1)) lua_pushnumber(L, (lua_Number)get_be(c, 1)); break;
        case 0xcd: if (need(c, 2)) lua_pushnumber(L, (lua_Number)get_be(c, 2)); break;
        case 0xce: if (need(c, 4)) lua_pushnumber(L, (lua_Number)get_be(c, 4)); break;
        case 0xcf: if (need(c, 8)) lua_pushnumber(L, (lua_Number)get_be(c, 8)); break;
        case 0xd0: if (need(c, 1)) lua_pushnumber(L, (int8_t)get_be(c, 1)); break;
        case 0xd1: if (need(c, 2)) lua_pushnumber(L, (int16_t)get_be(c, 2)); break;
        case 0xd2: if (need(c, 4)) lua_pushnumber(L, (int32_t)get_be(c, 4)); break;
        case 0xd3: if (need(c, 8)) lua_pushnumber(L, (lua_Number)(int64_t)get_be(c, 8)); break;
        case 0xdc: if (need(c, 2)) decode_array(L, c, (size_t)get_be(c, 2), depth); break;
        case 0xdd: if (need(c, 4)) decode_array(L, c, (size_t)get_be(c, 4), depth); break;
        case 0xde: if (need(c, 2)) decode_map(L, c, (size_t)get_be(c, 2), depth); break;
        case 0xdf: if (need(c, 4)) decode_map(L, c, (size_t)get_be(c, 4), depth); break;
        default: c->err = 3; break;
        }
    }
}

/* Decodes up to limit objects (0: all) from offset; pushes them. */
static int unpack_full(lua_State *L, int limit, int offset, int with_offset) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    if (offset < 0 || limit < 0) return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", offset, limit);
    if ((size_t)offset > len) return luaL_error(L, "Start offset %d greater than input length %d.", offset, (int)len);
    int base = lua_gettop(L);
    if (with_offset) lua_pushnil(L); /* the next offset goes here */
    cursor c = {(const unsigned char *)s + offset, len - (size_t)offset, 0};
    int count = 0;
    while (c.left > 0 && (limit == 0 || count < limit)) {
        int top = lua_gettop(L);
        decode(L, &c, 0);
        if (c.err) {
            lua_settop(L, top);
            if (c.err == 1) return luaL_error(L, "Missing bytes in input.");
            if (c.err == 2) return luaL_error(L, "Too deeply nested input.");
            return luaL_error(L, "Bad data format in input.");
        }
        count++;
    }
    if (with_offset) {
        lua_pushnumber(L, c.left == 0 ? -1 : (lua_Number)(len - c.left));
        lua_replace(L, base + 1);
        return count + 1;
    }
    return count;
}

static int mp_unpack(lua_State *L) { return unpack_full(L, 0, 0, 0); }
static int mp_unpack_one(lua_State *L) { return unpack_full(L, 1, (int)luaL_optinteger(L, 2, 0), 1); }
static int mp_unpack_limit(lua_State *L) {
    return unpack_full(L, (int)luaL_checkinteger(L, 2), (int)luaL_optinteger(L, 3, 0), 1);
}

int slua_open_cmsgpack(lua_State *L) {
    static const luaL_Reg fns[] = {{"pack", mp_pack},
                                   {"unpack", mp_unpack},
                                   {"unpack_one", mp_unpack_one},
                                   {"unpack_limit", mp_unpack_limit},
                                   {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    lua_pushstring(L, "lua-cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushstring(L, "0.4.0");
    lua_setfield(L, -2, "_VERSION");
    return 1;
}
