/* geohash.c - see geohash.h. */
#include "core/geohash.h"
#include <math.h>

#define MERCATOR_MAX 20037726.37
#define EARTH_RADIUS_M 6372797.560856
#define D_R (M_PI / 180.0)

static double deg_rad(double a) { return a * D_R; }
static double rad_deg(double a) { return a / D_R; }

typedef struct range {
    double min, max;
} range;

typedef struct area {
    range lon, lat;
} area;

static const range lon_range = {GEO_LONG_MIN, GEO_LONG_MAX};
static const range lat_range = {GEO_LAT_MIN, GEO_LAT_MAX};

/* ---- bits ---- */

/* x in the even bits, y in the odd ones (spreading each by binary magic
 * numbers: 16, 8, 4, 2, 1 bit steps). */
static uint64_t spread(uint32_t v) {
    uint64_t x = v;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x << 2)) & 0x3333333333333333ULL;
    x = (x | (x << 1)) & 0x5555555555555555ULL;
    return x;
}

static uint32_t squeeze(uint64_t x) {
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)x;
}

static uint64_t interleave(uint32_t x, uint32_t y) { return spread(x) | spread(y) << 1; }

/* The even bits in the low half, the odd bits in the high half. */
static uint64_t deinterleave(uint64_t v) { return (uint64_t)squeeze(v) | (uint64_t)squeeze(v >> 1) << 32; }

static int encode(range lon, range lat, double x, double y, uint8_t step, geo_bits *h) {
    if (step == 0 || step > 32) return 0;
    if (x > GEO_LONG_MAX || x < GEO_LONG_MIN || y > GEO_LAT_MAX || y < GEO_LAT_MIN) return 0;
    h->bits = 0;
    h->step = step;
    if (y < lat.min || y > lat.max || x < lon.min || x > lon.max) return 0;
    double lat_off = (y - lat.min) / (lat.max - lat.min);
    double lon_off = (x - lon.min) / (lon.max - lon.min);
    lat_off *= (double)(1ULL << step);
    lon_off *= (double)(1ULL << step);
    h->bits = interleave((uint32_t)lat_off, (uint32_t)lon_off);
    return 1;
}

int geo_encode(double lon, double lat, geo_bits *h) { return encode(lon_range, lat_range, lon, lat, GEO_STEP_MAX, h); }

int geo_encode_std(double lon, double lat, geo_bits *h) {
    range std_lat = {-90, 90};
    return encode(lon_range, std_lat, lon, lat, GEO_STEP_MAX, h);
}

uint64_t geo_align52(geo_bits h) { return h.bits << (52 - h.step * 2); }

static void decode(geo_bits h, area *a) {
    uint64_t sep = deinterleave(h.bits);
    double lat_scale = lat_range.max - lat_range.min, lon_scale = lon_range.max - lon_range.min;
    uint32_t ilat = (uint32_t)sep, ilon = (uint32_t)(sep >> 32);
    double cells = (double)(1ULL << h.step);
    a->lat.min = lat_range.min + (ilat * 1.0 / cells) * lat_scale;
    a->lat.max = lat_range.min + ((ilat + 1) * 1.0 / cells) * lat_scale;
    a->lon.min = lon_range.min + (ilon * 1.0 / cells) * lon_scale;
    a->lon.max = lon_range.min + ((ilon + 1) * 1.0 / cells) * lon_scale;
}

/* The integer bits of a score as a C cast produces them on x86-64. */
static uint64_t score_bits(double s) {
    if (s >= 0 && s < 18446744073709551616.0) return (uint64_t)s;
    if (s < 0 && s > -9223372036854775808.0) return (uint64_t)(int64_t)s;
    return s >= 18446744073709551616.0 ? 0 : 0x8000000000000000ULL;
}

int geo_decode_score(double score, double xy[2]) {
    geo_bits h = {score_bits(score), GEO_STEP_MAX};
    area a;
    decode(h, &a);
    xy[0] = (a.lon.min + a.lon.max) / 2;
    if (xy[0] > GEO_LONG_MAX) xy[0] = GEO_LONG_MAX;
    if (xy[0] < GEO_LONG_MIN) xy[0] = GEO_LONG_MIN;
    xy[1] = (a.lat.min + a.lat.max) / 2;
    if (xy[1] > GEO_LAT_MAX) xy[1] = GEO_LAT_MAX;
    if (xy[1] < GEO_LAT_MIN) xy[1] = GEO_LAT_MIN;
    return 1;
}

void geo_hash_string(double score, char out[11]) {
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    double xy[2];
    geo_decode_score(score, xy);
    geo_bits h;
    geo_encode_std(xy[0], xy[1], &h);
    for (int i = 0; i < 11; i++) {
        int idx = i == 10 ? 0 : (int)((h.bits >> (52 - (i + 1) * 5)) & 0x1f); /* 52 bits: the last is 0 */
        out[i] = alphabet[idx];
    }
}

/* ---- neighbours ---- */

static void move_x(geo_bits *h, int d) {
    if (d == 0) return;
    uint64_t x = h->bits & 0xaaaaaaaaaaaaaaaaULL, y = h->bits & 0x5555555555555555ULL;
    uint64_t zz = 0x5555555555555555ULL >> (64 - h->step * 2);
    if (d > 0) {
        x = x + (zz + 1);
    } else {
        x = x | zz;
        x = x - (zz + 1);
    }
    x &= 0xaaaaaaaaaaaaaaaaULL >> (64 - h->step * 2);
    h->bits = x | y;
}

static void move_y(geo_bits *h, int d) {
    if (d == 0) return;
    uint64_t x = h->bits & 0xaaaaaaaaaaaaaaaaULL, y = h->bits & 0x5555555555555555ULL;
    uint64_t zz = 0xaaaaaaaaaaaaaaaaULL >> (64 - h->step * 2);
    if (d > 0) {
        y = y + (zz + 1);
    } else {
        y = y | zz;
        y = y - (zz + 1);
    }
    y &= 0x5555555555555555ULL >> (64 - h->step * 2);
    h->bits = x | y;
}

/* The cell and its neighbours in Redis's scan order: centre, N, S, E, W,
 * NE, NW, SE, SW. */
enum { C_SELF, C_N, C_S, C_E, C_W, C_NE, C_NW, C_SE, C_SW };
static void neighbours(geo_bits h, geo_bits n[9]) {
    static const int dx[9] = {0, 0, 0, 1, -1, 1, -1, 1, -1}, dy[9] = {0, 1, -1, 0, 0, 1, 1, -1, -1};
    for (int i = 0; i < 9; i++) {
        n[i] = h;
        move_x(&n[i], dx[i]);
        move_y(&n[i], dy[i]);
    }
}

/* ---- search areas ---- */

static int steps_for_radius(double range_m, double lat) {
    if (range_m == 0) return 26;
    int step = 1;
    while (range_m < MERCATOR_MAX) {
        range_m *= 2;
        step++;
    }
    step -= 2; /* the range in most base cases */
    if (lat > 66 || lat < -66) { /* wider cells towards the poles */
        step--;
        if (lat > 80 || lat < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > 26) step = 26;
    return step;
}

/* min lon, min lat, max lon, max lat of the shape. */
static void bounding_box(const geo_shape *s, double b[4]) {
    double lon = s->xy[0], lat = s->xy[1];
    double height = s->conversion * (s->type == GEO_CIRCLE ? s->radius : s->height / 2);
    double width = s->conversion * (s->type == GEO_CIRCLE ? s->radius : s->width / 2);
    double lat_delta = rad_deg(height / EARTH_RADIUS_M);
    double lon_delta_top = rad_deg(width / EARTH_RADIUS_M / cos(deg_rad(lat + lat_delta)));
    double lon_delta_bottom = rad_deg(width / EARTH_RADIUS_M / cos(deg_rad(lat - lat_delta)));
    int south = lat < 0; /* the wider edge is the one nearer the equator */
    b[0] = south ? lon - lon_delta_bottom : lon - lon_delta_top;
    b[2] = south ? lon + lon_delta_bottom : lon + lon_delta_top;
    b[1] = lat - lat_delta;
    b[3] = lat + lat_delta;
}

int geo_search_ranges(const geo_shape *s, uint64_t min[9], uint64_t max[9]) {
    double b[4];
    bounding_box(s, b);
    double radius_m = s->type == GEO_CIRCLE ? s->radius
                                            : sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2));
    radius_m *= s->conversion;
    int steps = steps_for_radius(radius_m, s->xy[1]);
    geo_bits h, n[9];
    area a;
    encode(lon_range, lat_range, s->xy[0], s->xy[1], (uint8_t)steps, &h);
    neighbours(h, n);
    decode(h, &a);
    /* Near a cell's edge the estimated step may leave part of the shape
     * outside the 3x3 cells: then one step larger. */
    area north, south, east, west;
    decode(n[C_N], &north);
    decode(n[C_S], &south);
    decode(n[C_E], &east);
    decode(n[C_W], &west);
    int smaller = north.lat.max < b[3] || south.lat.min > b[1] || east.lon.max < b[2] || west.lon.min > b[0];
    if (steps > 1 && smaller) {
        steps--;
        encode(lon_range, lat_range, s->xy[0], s->xy[1], (uint8_t)steps, &h);
        neighbours(h, n);
        decode(h, &a);
    }
    int drop[9] = {0};
    if (steps >= 2) {
        if (a.lat.min < b[1]) drop[C_S] = drop[C_SW] = drop[C_SE] = 1;
        if (a.lat.max > b[3]) drop[C_N] = drop[C_NE] = drop[C_NW] = 1;
        if (a.lon.min < b[0]) drop[C_W] = drop[C_SW] = drop[C_NW] = 1;
        if (a.lon.max > b[2]) drop[C_E] = drop[C_SE] = drop[C_NE] = 1;
    }
    int k = 0, last = 0;
    for (int i = 0; i < 9; i++) {
        if (drop[i]) continue;
        /* Huge radii make neighbours repeat: skip one equal to the last
         * scanned (Redis compares only from the second scanned cell on). */
        if (last && n[i].bits == n[last].bits && n[i].step == n[last].step) continue;
        geo_bits hi = n[i];
        min[k] = geo_align52(hi);
        hi.bits++;
        max[k] = geo_align52(hi);
        k++;
        last = i;
    }
    return k;
}

/* ---- distances ---- */

double geo_distance(double lon1d, double lat1d, double lon2d, double lat2d) {
    double lat1r = deg_rad(lat1d), lon1r = deg_rad(lon1d), lat2r = deg_rad(lat2d), lon2r = deg_rad(lon2d);
    double u = sin((lat2r - lat1r) / 2), v = sin((lon2r - lon1r) / 2);
    return 2.0 * EARTH_RADIUS_M * asin(sqrt(u * u + cos(lat1r) * cos(lat2r) * v * v));
}

int geo_in_shape(const geo_shape *s, double lon, double lat, double *dist) {
    double x1 = s->xy[0], y1 = s->xy[1];
    if (s->type == GEO_CIRCLE) {
        *dist = geo_distance(x1, y1, lon, lat);
        return *dist <= s->radius * s->conversion;
    }
    double w = s->width * s->conversion, hgt = s->height * s->conversion;
    double lon_distance = geo_distance(lon, lat, x1, lat); /* along the point's parallel */
    double lat_distance = geo_distance(lon, lat, lon, y1); /* along its meridian */
    if (lon_distance > w / 2 || lat_distance > hgt / 2) return 0;
    *dist = geo_distance(x1, y1, lon, lat);
    return 1;
}
