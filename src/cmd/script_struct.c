/* script_struct.c - the `struct` library of Redis's Lua: struct.pack(fmt,
 * ...), struct.unpack(fmt, s [, pos]), struct.size(fmt), with its format
 * language (< > ! alignment, x padding, b B h H l L T i[n] I[n] integers,
 * f d floats, c[n] fixed strings, s zero-terminated strings). Sizes and
 * counts are checked against the data and against overflow, so a huge
 * count is an error, never a large allocation or a read past the end. */
#include <ctype.h>
#include <lauxlib.h>
#include <limits.h>
#include <lua.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { BIG, LITTLE };
enum { MAXINTSIZE = 32 };

struct cD {
    char c;
    double d;
};
#define MAXALIGN ((int)offsetof(struct cD, d))

typedef struct header {
    int endian, align;
} header;

static int native_endian(void) {
    const uint16_t one = 1;
    return *(const char *)&one ? LITTLE : BIG;
}

static int getnum(lua_State *L, const char **fmt, int df) {
    if (!isdigit((unsigned char)**fmt)) return df;
    int a = 0;
    do {
        int d = **fmt - '0';
        if (a > (INT_MAX / 10) || a * 10 > INT_MAX - d) return luaL_error(L, "integral size overflow");
        a = a * 10 + d;
        (*fmt)++;
    } while (isdigit((unsigned char)**fmt));
    return a;
}

static size_t optsize(lua_State *L, char opt, const char **fmt) {
    switch (opt) {
    case 'B':
    case 'b': return 1;
    case 'H':
    case 'h': return sizeof(short);
    case 'L':
    case 'l': return sizeof(long);
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return (size_t)getnum(L, fmt, 1);
    case 'i':
    case 'I': {
        int sz = getnum(L, fmt, sizeof(int));
        if (sz > MAXINTSIZE) luaL_error(L, "integral size %d is larger than limit of %d", sz, MAXINTSIZE);
        return (size_t)sz;
    }
    default: return 0;
    }
}

static size_t gettoalign(size_t len, const header *h, int opt, size_t size) {
    if (size == 0 || opt == 'c') return 0;
    if (size > (size_t)h->align) size = (size_t)h->align;
    return (size - (len & (size - 1))) & (size - 1);
}

static void controloptions(lua_State *L, int opt, const char **fmt, header *h) {
    switch (opt) {
    case ' ': return;
    case '>': h->endian = BIG; return;
    case '<': h->endian = LITTLE; return;
    case '!': {
        int a = getnum(L, fmt, MAXALIGN);
        if (a <= 0 || (a & (a - 1))) luaL_error(L, "alignment %d is not a power of 2", a);
        h->align = a;
        return;
    }
    default: {
        const char *msg = lua_pushfstring(L, "invalid format option '%c'", opt);
        luaL_argerror(L, 1, msg);
    }
    }
}

static void putinteger(lua_State *L, luaL_Buffer *b, int arg, int endian, size_t size) {
    lua_Number n = luaL_checknumber(L, arg);
    unsigned long long v;
    if (n != n) v = (unsigned long long)LLONG_MIN; /* NaN: what the x86 conversion Redis relies on gives */
    else if (n < 0) v = (n < (lua_Number)LLONG_MIN) ? (unsigned long long)LLONG_MIN : (unsigned long long)(long long)n;
    else v = n >= 18446744073709551615.0 ? ~0ull : (unsigned long long)n;
    char buff[MAXINTSIZE];
    for (size_t i = 0; i < size; i++) {
        size_t at = endian == LITTLE ? i : size - 1 - i;
        buff[at] = (char)(v & 0xff);
        v = i < 7 ? v >> 8 : (n < 0 ? ~0ull : 0); /* sign bytes beyond 64 bits */
    }
    luaL_addlstring(b, buff, size);
}

static void correctbytes(char *p, size_t size, int endian) {
    if (endian == native_endian()) return;
    for (size_t i = 0, j = size - 1; i < j; i++, j--) {
        char t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

static int b_pack(lua_State *L) {
    const char *fmt = luaL_checkstring(L, 1);
    header h = {native_endian(), 1};
    int arg = 2;
    size_t total = 0;
    luaL_Buffer b;
    lua_pushnil(L); /* separates the arguments from the buffer's stack use */
    luaL_buffinit(L, &b);
    while (*fmt) {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        size_t toalign = gettoalign(total, &h, opt, size);
        total += toalign;
        while (toalign-- > 0) luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I': putinteger(L, &b, arg++, h.endian, size); break;
        case 'x': luaL_addchar(&b, '\0'); break;
        case 'f': {
            float f = (float)luaL_checknumber(L, arg++);
            correctbytes((char *)&f, size, h.endian);
            luaL_addlstring(&b, (char *)&f, size);
            break;
        }
        case 'd': {
            double d = luaL_checknumber(L, arg++);
            correctbytes((char *)&d, size, h.endian);
            luaL_addlstring(&b, (char *)&d, size);
            break;
        }
        case 'c':
        case 's': {
            size_t l;
            const char *s = luaL_checklstring(L, arg++, &l);
            if (size == 0) size = l;
            luaL_argcheck(L, l >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default: controloptions(L, opt, &fmt, &h);
        }
        total += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static lua_Number getinteger(const char *p, int endian, int issigned, size_t size) {
    unsigned long long l = 0;
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)p[endian == BIG ? i : size - 1 - i];
        l = (l << 8) | c;
    }
    if (!issigned) return (lua_Number)l;
    if (size > 0 && size < 8) { /* (i0 reads no byte: 0) */
        unsigned long long mask = ~0ull << (size * 8 - 1);
        if (l & mask) l |= mask;
    }
    return (lua_Number)(long long)l;
}

static int b_unpack(lua_State *L) {
    header h = {native_endian(), 1};
    const char *fmt = luaL_checkstring(L, 1);
    size_t ld;
    const char *data = luaL_checklstring(L, 2, &ld);
    lua_Integer start = luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, start >= 1, 3, "offset must be 1 or greater");
    size_t pos = (size_t)start - 1;
    int n = 0;
    while (*fmt) {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        pos += gettoalign(pos, &h, opt, size);
        luaL_argcheck(L, pos <= ld && size <= ld - pos, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I':
            lua_pushnumber(L, getinteger(data + pos, h.endian, islower(opt), size));
            n++;
            break;
        case 'x': break;
        case 'f': {
            float f;
            memcpy(&f, data + pos, size);
            correctbytes((char *)&f, sizeof f, h.endian);
            lua_pushnumber(L, f);
            n++;
            break;
        }
        case 'd': {
            double d;
            memcpy(&d, data + pos, size);
            correctbytes((char *)&d, sizeof d, h.endian);
            lua_pushnumber(L, d);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
                lua_Number len = lua_tonumber(L, -1);
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, len >= 0 && len <= (lua_Number)(ld - pos), 2, "data string too short");
                size = (size_t)len;
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *e = memchr(data + pos, '\0', ld - pos);
            if (!e) luaL_error(L, "unfinished string in data");
            size = (size_t)(e - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default: controloptions(L, opt, &fmt, &h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos + 1);
    return n + 1;
}

static int b_size(lua_State *L) {
    header h = {native_endian(), 1};
    const char *fmt = luaL_checkstring(L, 1);
    size_t pos = 0;
    while (*fmt) {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        pos += gettoalign(pos, &h, opt, size);
        if (opt == 's') luaL_argerror(L, 1, "options 's' has no fixed size");
        else if (opt == 'c' && size == 0) luaL_argerror(L, 1, "options 'c0' has no fixed size");
        if (!isalnum(opt)) controloptions(L, opt, &fmt, &h);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int slua_open_struct(lua_State *L) {
    static const luaL_Reg fns[] = {{"pack", b_pack}, {"unpack", b_unpack}, {"size", b_size}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
