/* lolwut.c - LOLWUT [VERSION v] [args...]: computer art and the version.
 *
 * As Redis 7.0: VERSION 5 draws Georg Nees's "Schotter" (a grid of squares
 * that turn and drift more the lower the row) in Braille characters, 2x4
 * pixels a character; VERSION 6 draws a city skyline in the terminal's four
 * grays (one ANSI-colored space a pixel); any other version, and LOLWUT
 * without VERSION, answers only "Redis ver. 7.0.15". The art comes from the
 * shard's random generator, so only its shape is Redis's, never its bytes.
 *
 *   LOLWUT VERSION 5 [columns=66] [squares-per-row=8] [squares-per-col=12]
 *   LOLWUT VERSION 6 [columns=80] [rows=20]
 *
 * Arguments are clamped as Redis clamps them (columns 1..1000, squares
 * 1..200, rows 1..1000). **Departure:** a Schotter canvas over
 * LOLWUT_MAX_PIXELS (Redis allows about 800 million pixels, a 300 MB
 * reply) answers an error instead. */
#include "cmd/cmd.h"
#include "lib/mem.h"
#include "shard/shard.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOLWUT_REDIS_VERSION "7.0.15"
#define LOLWUT_MAX_PIXELS (1 << 24)

/* A grid of pixels, each a color 0..3; reads and writes outside it are
 * ignored (read as 0). */
typedef struct canvas {
    int w, h;
    unsigned char *px;
} canvas;

static canvas canvas_make(int w, int h, int color) {
    canvas cv = {w, h, zmalloc((size_t)w * (size_t)h)};
    memset(cv.px, color, (size_t)w * (size_t)h);
    return cv;
}

static void put(canvas *cv, int x, int y, int color) {
    if (x >= 0 && y >= 0 && x < cv->w && y < cv->h)
        cv->px[(size_t)y * (size_t)cv->w + (size_t)x] = (unsigned char)color;
}

static int get(const canvas *cv, int x, int y) {
    if (x < 0 || y < 0 || x >= cv->w || y >= cv->h) return 0;
    return cv->px[(size_t)y * (size_t)cv->w + (size_t)x];
}

/* rand()-like: 31 random bits. */
static int rnd(shard *sh) { return (int)(shard_rand(sh) >> 33); }
/* Uniform in [0, 1]. */
static float rnd_unit(shard *sh) { return (float)rnd(sh) / (float)0x7fffffff; }

/* ---- VERSION 5: Schotter ---- */

/* Pixels of the segment (x0,y0)-(x1,y1), both ends included (Bresenham:
 * the error term tracks the distance to the ideal line in both axes). */
static void draw_line(canvas *cv, int x0, int y0, int x1, int y1) {
    int dx = abs(x1 - x0), dy = abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx - dy;
    for (;;) {
        put(cv, x0, y0, 1);
        if (x0 == x1 && y0 == y1) return;
        int twice = 2 * err;
        if (twice > -dy) {
            err -= dy;
            x0 += sx;
        }
        if (twice < dx) {
            err += dx;
            y0 += sy;
        }
    }
}

/* The outline of a square of the given side centred on (cx, cy), turned
 * by angle radians: its corners lie on the circle through them, a quarter
 * turn apart, the first at 45 degrees plus the angle. */
static void draw_square(canvas *cv, int cx, int cy, float side, float angle) {
    float r = roundf(side / 1.4142135623f); /* the half diagonal */
    int x[4], y[4];
    float a = (float)M_PI / 4 + angle;
    for (int k = 0; k < 4; k++, a += (float)M_PI / 2) {
        x[k] = (int)lround(sin(a) * r + cx);
        y[k] = (int)lround(cos(a) * r + cy);
    }
    for (int k = 0; k < 4; k++)
        draw_line(cv, x[k], y[k], x[(k + 1) % 4], y[(k + 1) % 4]);
}

/* The canvas is 2 pixels a column wide, with a 2-pixel margin when it is
 * wider than 4; the first two rows of squares stay in place, each later
 * row turns and shifts its squares by random amounts growing with its
 * index. */
static int schotter(canvas *cv, shard *sh, int cols, int per_row, int per_col) {
    int w = cols * 2, pad = w > 4 ? 2 : 0;
    float side = (float)(w - 2 * pad) / (float)per_row;
    int h = (int)(side * (float)per_col + (float)(2 * pad));
    if ((int64_t)w * h > LOLWUT_MAX_PIXELS) return -1;
    *cv = canvas_make(w, h, 0);
    for (int row = 0; row < per_col; row++) {
        for (int col = 0; col < per_row; col++) {
            int cx = (int)((float)col * side + side / 2 + (float)pad);
            int cy = (int)((float)row * side + side / 2 + (float)pad);
            float angle = 0;
            if (row > 1) {
                float turn = rnd_unit(sh) / (float)per_col * (float)row;
                float dx = rnd_unit(sh) / (float)per_col * (float)row;
                float dy = rnd_unit(sh) / (float)per_col * (float)row;
                if (rnd(sh) % 2) turn = -turn;
                if (rnd(sh) % 2) dx = -dx;
                if (rnd(sh) % 2) dy = -dy;
                angle = turn;
                cx = (int)((float)cx + dx * side / 3);
                cy = (int)((float)cy + dy * side / 3);
            }
            draw_square(cv, cx, cy, side, angle);
        }
    }
    return 0;
}

/* Braille: a character per 2x4 pixels, dot bits numbered down the left
 * column (0 1 2), then down the right (3 4 5), then the bottom pair (6 7);
 * U+2800 + bits, three bytes of UTF-8. A newline ends every row of
 * characters except one that starts on the canvas's last pixel row. */
static void render_braille(buf *o, const canvas *cv) {
    static const int dots[8][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}};
    for (int y = 0; y < cv->h; y += 4) {
        for (int x = 0; x < cv->w; x += 2) {
            int bits = 0;
            for (int d = 0; d < 8; d++)
                if (get(cv, x + dots[d][0], y + dots[d][1])) bits |= 1 << d;
            int code = 0x2800 + bits;
            buf_addc(o, (char)(0xE0 | (code >> 12)));
            buf_addc(o, (char)(0x80 | ((code >> 6) & 0x3F)));
            buf_addc(o, (char)(0x80 | (code & 0x3F)));
        }
        if (y != cv->h - 1) buf_addc(o, '\n');
    }
}

/* An optional integer argument: *v keeps its default when absent. */
static int opt_ll(cmd_ctx *c, int i, long long *v) { return i >= c->argc || arg_ll(c, i, v); }

static long long clamp(long long v, long long lo, long long hi) { return v < lo ? lo : v > hi ? hi : v; }

static void lolwut5(cmd_ctx *c, int from) {
    long long cols = 66, per_row = 8, per_col = 12;
    if (!opt_ll(c, from, &cols) || !opt_ll(c, from + 1, &per_row) || !opt_ll(c, from + 2, &per_col)) return;
    canvas cv;
    if (schotter(&cv, c->sh, (int)clamp(cols, 1, 1000), (int)clamp(per_row, 1, 200), (int)clamp(per_col, 1, 200)) < 0) {
        reply_error(c, "ERR LOLWUT canvas too large");
        return;
    }
    buf o = {0};
    render_braille(&o, &cv);
    buf_adds(&o, "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. " LOLWUT_REDIS_VERSION "\n");
    reply_verbatim(c, o.p, o.len);
    buf_free(&o);
    zfree(cv.px);
}

/* ---- VERSION 6: skyline ---- */

/* Colors: 0 black, 1 and 2 grays, 3 white (the sky). */
typedef struct tower {
    int x, w, h, color, windows;
} tower;

/* A tower standing on the canvas's bottom row, its roof row two pixels
 * narrower at each side. With windows, the inner part (two pixels in from
 * the sides, one from the roof and bottom) has windows two pixels wide and
 * one tall on every other row, each in a random gray. */
static void draw_tower(canvas *cv, shard *sh, const tower *t) {
    int bottom = cv->h - 1, top = bottom - t->h + 1;
    for (int y = bottom; y >= top; y--) {
        for (int x = t->x; x < t->x + t->w; x++) {
            if (y == top && (x <= t->x + 1 || x >= t->x + t->w - 2)) continue;
            int color = t->color;
            int inside = x > t->x + 1 && x < t->x + t->w - 2 && y > top + 1 && y < bottom - 1;
            int wx = x - (t->x + 1), wy = y - (top + 1);
            if (t->windows && inside && (wx / 2) % 2 && wy % 2) {
                if (wx % 2) {
                    color = get(cv, x - 1, y); /* the window's second pixel */
                } else {
                    do
                        color = 1 + rnd(sh) % 2;
                    while (color == t->color);
                }
            }
            put(cv, x, y, color);
        }
    }
}

/* Two rows of windowless towers behind (the lighter gray farthest back),
 * then black towers with windows in front, each row left to right with
 * random gaps, from a little left of the canvas to past its right edge. */
static void skyline(canvas *cv, shard *sh) {
    tower t;
    for (int color = 2; color >= 1; color--) {
        t.color = color;
        t.windows = 0;
        for (int x = -10; x < cv->w;) {
            x += rnd(sh) % 8;
            t.x = x;
            t.w = 10 + rnd(sh) % 9;
            t.h = cv->h / 2 + (rnd(sh) % cv->h) / (color == 2 ? 2 : 3);
            draw_tower(cv, sh, &t);
            x += color == 2 ? t.w / 2 : t.w + 1;
        }
    }
    t.color = 0;
    t.windows = 1;
    for (int x = -10; x < cv->w;) {
        x += rnd(sh) % 8;
        t.x = x;
        t.w = 5 + rnd(sh) % 14;
        if (t.w % 4) t.w += t.w % 3;
        t.h = cv->h / 3 + (rnd(sh) % cv->h) / 2;
        draw_tower(cv, sh, &t);
        x += t.w + 5;
    }
}

/* A pixel is a space with the same foreground and background color, so
 * terminals agree on it; rows end with a newline except the last. */
static void render_ansi(buf *o, const canvas *cv) {
    static const char *const esc[4] = {"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"};
    for (int y = 0; y < cv->h; y++) {
        for (int x = 0; x < cv->w; x++)
            buf_printf(o, "\033[%s \033[0m", esc[get(cv, x, y) & 3]);
        if (y != cv->h - 1) buf_addc(o, '\n');
    }
}

static void lolwut6(cmd_ctx *c, int from) {
    long long cols = 80, rows = 20;
    if (!opt_ll(c, from, &cols) || !opt_ll(c, from + 1, &rows)) return;
    canvas cv = canvas_make((int)clamp(cols, 1, 1000), (int)clamp(rows, 1, 1000), 3);
    skyline(&cv, c->sh);
    buf o = {0};
    render_ansi(&o, &cv);
    buf_adds(&o, "\nDedicated to the 8 bit game developers of past and present.\n"
                 "Original 8 bit image from Plaguemon by hikikomori. Redis ver. " LOLWUT_REDIS_VERSION "\n");
    reply_verbatim(c, o.p, o.len);
    buf_free(&o);
    zfree(cv.px);
}

/* LOLWUT [VERSION version] [argument ...] */
static void lolwut_cmd(cmd_ctx *c) {
    unsigned version = 7;
    int from = 1;
    if (c->argc >= 3 && arg_is(c, 1, "version")) {
        long long v;
        if (!arg_ll(c, 2, &v)) return;
        version = (unsigned)v; /* as Redis, which prints it with %u */
        from = 3;
    }
    if (version == 5) {
        lolwut5(c, from);
    } else if (version == 6) {
        lolwut6(c, from);
    } else {
        static const char text[] = "Redis ver. " LOLWUT_REDIS_VERSION "\n";
        reply_verbatim(c, text, sizeof text - 1);
    }
}

static const command rows[] = {
    {.name = "lolwut",
     .proc = lolwut_cmd,
     .arity = -1,
     .flags = CMD_READONLY | CMD_FAST,
     .group = "server",
     .since = "5.0.0",
     .acl = "read fast",
     .summary = "Display some computer art and the Redis version"},
};

void lolwut_register(void) { cmd_register(rows, (int)(sizeof rows / sizeof rows[0])); }
