/* script_conv.c - Lua <-> RESP as Redis 7.0 converts them (see script.h).
 *
 * A command's reply to Lua: integer -> number, bulk -> string, null bulk
 * or null array -> false, status -> {ok=s}, error -> {err=s}, array ->
 * table; with redis.setresp(3) also null -> nil, map -> {map={k=v}}, set
 * -> {set={m=true}}, double -> {double=n}, boolean -> true/false, big
 * number -> {big_number=s}, verbatim -> {verbatim_string={format=, string=}}.
 *
 * A Lua value to the script's reply: string -> bulk, number -> integer
 * (truncated), boolean -> 1 / null (or RESP3 booleans after setresp(3)),
 * a table with a string err / ok -> error / status, double, big_number,
 * map, set, verbatim_string as above, any other table -> array of its
 * elements 1..n up to the first nil; anything else -> null. */
#include "cmd/script.h"
#include "lib/util.h"
#include <lauxlib.h>
#include <lua.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CONV_MAX_DEPTH = 1000 };

int sconv_number(char *dst, double d) {
    return snprintf(dst, 32, "%.17g", d);
}

/* ---- RESP -> Lua ---- */

/* The line at p (up to CRLF): its length, or -1 when there is none. */
static long line_len(const char *p, size_t n) {
    const char *e = memchr(p, '\r', n);
    if (!e || (size_t)(e - p) + 1 >= n || e[1] != '\n') return -1;
    return (long)(e - p);
}

static size_t push_reply(lua_State *L, const char *p, size_t n, int depth);

/* Pushes count elements as a table t[1..count]; returns bytes used or 0. */
static size_t push_elems(lua_State *L, const char *p, size_t n, long long count, int depth) {
    size_t used = 0;
    lua_newtable(L);
    for (long long i = 0; i < count; i++) {
        size_t k = push_reply(L, p + used, n - used, depth + 1);
        if (!k) return 0;
        used += k;
        lua_rawseti(L, -2, (int)i + 1);
    }
    return used;
}

static size_t push_reply(lua_State *L, const char *p, size_t n, int depth) {
    if (n < 3 || depth > CONV_MAX_DEPTH || !lua_checkstack(L, 8)) {
        lua_pushnil(L);
        return 0;
    }
    long ll = line_len(p, n);
    if (ll < 1) {
        lua_pushnil(L);
        return 0;
    }
    size_t head = (size_t)ll + 2;
    const char *s = p + 1;
    size_t sl = (size_t)ll - 1;
    long long v = 0;
    switch (p[0]) {
    case '+':
    case '-':
        lua_newtable(L);
        lua_pushlstring(L, s, sl);
        lua_setfield(L, -2, p[0] == '+' ? "ok" : "err");
        return head;
    case ':':
        str2ll(s, sl, &v);
        lua_pushnumber(L, (lua_Number)v);
        return head;
    case '$':
    case '=':
    case '(':
        if (p[0] == '(') {
            lua_newtable(L);
            lua_pushlstring(L, s, sl);
            lua_setfield(L, -2, "big_number");
            return head;
        }
        str2ll(s, sl, &v);
        if (v < 0) {
            lua_pushboolean(L, 0);
            return head;
        }
        if (head + (size_t)v + 2 > n) break;
        if (p[0] == '=') {
            lua_newtable(L);
            lua_newtable(L);
            lua_pushlstring(L, p + head, v >= 3 ? 3 : (size_t)v);
            lua_setfield(L, -2, "format");
            lua_pushlstring(L, p + head + (v >= 4 ? 4 : (size_t)v), v >= 4 ? (size_t)v - 4 : 0);
            lua_setfield(L, -2, "string");
            lua_setfield(L, -2, "verbatim_string");
        } else {
            lua_pushlstring(L, p + head, (size_t)v);
        }
        return head + (size_t)v + 2;
    case '*':
    case '~':
    case '%':
    case '>': {
        str2ll(s, sl, &v);
        if (v < 0) {
            lua_pushboolean(L, 0);
            return head;
        }
        if (p[0] == '*' || p[0] == '>') {
            size_t k = push_elems(L, p + head, n - head, v, depth);
            return k || v == 0 ? head + k : 0;
        }
        size_t used = head;
        lua_newtable(L);
        lua_newtable(L);
        for (long long i = 0; i < v; i++) {
            size_t k = push_reply(L, p + used, n - used, depth + 1);
            if (!k) return 0;
            used += k;
            if (p[0] == '%') {
                k = push_reply(L, p + used, n - used, depth + 1);
                if (!k) return 0;
                used += k;
            } else {
                lua_pushboolean(L, 1);
            }
            lua_settable(L, -3);
        }
        lua_setfield(L, -2, p[0] == '%' ? "map" : "set");
        return used;
    }
    case '_':
        lua_pushnil(L);
        return head;
    case '#':
        lua_pushboolean(L, sl == 1 && s[0] == 't');
        return head;
    case ',': {
        char tmp[64];
        size_t k = sl < sizeof tmp - 1 ? sl : sizeof tmp - 1;
        memcpy(tmp, s, k);
        tmp[k] = 0;
        lua_newtable(L);
        lua_pushnumber(L, strtod(tmp, NULL));
        lua_setfield(L, -2, "double");
        return head;
    }
    case '|': { /* attributes: skipped, the value after them counts */
        str2ll(s, sl, &v);
        size_t used = head;
        for (long long i = 0; i < v * 2; i++) {
            size_t k = push_reply(L, p + used, n - used, depth + 1);
            lua_pop(L, 1);
            if (!k) return 0;
            used += k;
        }
        size_t k = push_reply(L, p + used, n - used, depth);
        return k ? used + k : 0;
    }
    default: break;
    }
    lua_pushnil(L);
    return 0;
}

size_t sconv_push_reply(lua_State *L, const char *p, size_t n) { return push_reply(L, p, n, 0); }

/* ---- Lua -> RESP ---- */

/* The string field `name` of the table at idx, or NULL. */
static const char *str_field(lua_State *L, int idx, const char *name, size_t *len) {
    lua_pushstring(L, name);
    lua_rawget(L, idx); /* no metamethods, as Redis 7.0 */
    if (lua_type(L, -1) != LUA_TSTRING) {
        lua_pop(L, 1);
        return NULL;
    }
    const char *s = lua_tolstring(L, -1, len);
    lua_pop(L, 1); /* the string stays alive in the table */
    return s;
}

/* Pushes field `name` of the table at idx when it has type t (returns 1). */
static int typed_field(lua_State *L, int idx, const char *name, int t) {
    lua_pushstring(L, name);
    lua_rawget(L, idx);
    if (lua_type(L, -1) == t) return 1;
    lua_pop(L, 1);
    return 0;
}

/* Error and status text with CR/LF turned into spaces (Redis does too). */
static void add_line(buf *out, char type, const char *s, size_t n) {
    buf_addc(out, type);
    size_t at = out->len;
    buf_add(out, s, n);
    for (size_t i = at; i < out->len; i++)
        if (out->p[i] == '\r' || out->p[i] == '\n') out->p[i] = ' ';
    buf_add(out, "\r\n", 2);
}

static int reply_value(lua_State *L, int idx, buf *out, int proto, int sresp, int depth);

static int reply_table(lua_State *L, int idx, buf *out, int proto, int sresp, int depth) {
    size_t n;
    const char *s;
    if ((s = str_field(L, idx, "err", &n))) {
        add_line(out, '-', s, n);
        return 0;
    }
    if ((s = str_field(L, idx, "ok", &n))) {
        add_line(out, '+', s, n);
        return 0;
    }
    if (typed_field(L, idx, "double", LUA_TNUMBER)) {
        resp_double(out, proto, lua_tonumber(L, -1));
        lua_pop(L, 1);
        return 0;
    }
    if ((s = str_field(L, idx, "big_number", &n))) {
        if (proto >= 3) {
            add_line(out, '(', s, n);
        } else { /* a bulk string, CR/LF turned into spaces as well */
            size_t at = out->len;
            resp_bulk(out, s, n);
            for (size_t i = out->len - n - 2; i < out->len - 2 && i >= at; i++)
                if (out->p[i] == '\r' || out->p[i] == '\n') out->p[i] = ' ';
        }
        return 0;
    }
    if (typed_field(L, idx, "map", LUA_TTABLE)) {
        int t = lua_gettop(L);
        size_t at = out->len;
        long long pairs = 0;
        lua_pushnil(L);
        while (lua_next(L, t)) {
            if (reply_value(L, lua_gettop(L) - 1, out, proto, sresp, depth + 1) ||
                reply_value(L, lua_gettop(L), out, proto, sresp, depth + 1)) {
                lua_settop(L, t - 1);
                return -1;
            }
            lua_pop(L, 1);
            pairs++;
        }
        lua_pop(L, 1);
        buf tmp = {0};
        resp_map(&tmp, proto, pairs);
        buf_insert(out, at, tmp.p, tmp.len);
        buf_free(&tmp);
        return 0;
    }
    if (typed_field(L, idx, "set", LUA_TTABLE)) {
        int t = lua_gettop(L);
        size_t at = out->len;
        long long count = 0;
        lua_pushnil(L);
        while (lua_next(L, t)) {
            if (reply_value(L, lua_gettop(L) - 1, out, proto, sresp, depth + 1)) {
                lua_settop(L, t - 1);
                return -1;
            }
            lua_pop(L, 1);
            count++;
        }
        lua_pop(L, 1);
        buf tmp = {0};
        resp_set(&tmp, proto, count);
        buf_insert(out, at, tmp.p, tmp.len);
        buf_free(&tmp);
        return 0;
    }
    if (typed_field(L, idx, "verbatim_string", LUA_TTABLE)) {
        int t = lua_gettop(L);
        size_t fl, sl;
        const char *fmt = str_field(L, t, "format", &fl), *str = str_field(L, t, "string", &sl);
        lua_pop(L, 1);
        if (fmt && str) {
            if (proto >= 3) {
                char hdr[48];
                int hl = snprintf(hdr, sizeof hdr, "=%zu\r\n", sl + 4);
                buf_add(out, hdr, (size_t)hl);
                buf_add(out, fmt, fl < 3 ? fl : 3);
                for (size_t i = fl; i < 3; i++) buf_addc(out, ' ');
                buf_addc(out, ':');
                buf_add(out, str, sl);
                buf_add(out, "\r\n", 2);
            } else {
                resp_bulk(out, str, sl);
            }
            return 0;
        }
    }
    /* an array: elements 1..n until the first nil */
    size_t at = out->len;
    long long count = 0;
    for (int i = 1;; i++) {
        lua_rawgeti(L, idx, i);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (reply_value(L, lua_gettop(L), out, proto, sresp, depth + 1)) {
            lua_pop(L, 1);
            return -1;
        }
        lua_pop(L, 1);
        count++;
    }
    buf tmp = {0};
    resp_array(&tmp, count);
    buf_insert(out, at, tmp.p, tmp.len);
    buf_free(&tmp);
    return 0;
}

/* A Lua number as Redis replies it: truncated; NaN and values past the
 * range of long long give LLONG_MIN, as the x86 conversion Redis relies on
 * does (a plain cast there is undefined behaviour in C). */
static long long number_reply(double d) {
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return (long long)d;
    return LLONG_MIN;
}

static int reply_value(lua_State *L, int idx, buf *out, int proto, int sresp, int depth) {
    if (depth > CONV_MAX_DEPTH || !lua_checkstack(L, 8)) return -1;
    switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        resp_bulk(out, s, n);
        return 0;
    }
    case LUA_TBOOLEAN:
        if (sresp >= 3) resp_bool(out, proto, lua_toboolean(L, idx));
        else if (lua_toboolean(L, idx)) resp_int(out, 1);
        else resp_null(out, proto);
        return 0;
    case LUA_TNUMBER: resp_int(out, number_reply(lua_tonumber(L, idx))); return 0;
    case LUA_TTABLE: return reply_table(L, idx, out, proto, sresp, depth);
    default: resp_null(out, proto); return 0;
    }
}

int sconv_reply(lua_State *L, int idx, buf *out, int proto, int sresp) {
    size_t at = out->len;
    int top = lua_gettop(L);
    if (idx < 0) idx = top + idx + 1;
    int rc = reply_value(L, idx, out, proto, sresp, 0);
    lua_settop(L, top);
    if (rc) out->len = at;
    return rc;
}
