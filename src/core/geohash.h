/* geohash.h - the 52-bit geohash of Redis's geo commands, and the search
 * areas and distances they use.
 *
 * A point is a sorted-set score: longitude (-180..180) and latitude
 * (-85.05112878..85.05112878, the Web Mercator limits) each scaled to 26
 * bits and interleaved, latitude in the even bits, longitude in the odd
 * ones. Decoding gives the centre of the cell (clamped to the limits), so
 * a point reads back within about 0.6 m of where it was put.
 *
 * A search (radius or box around a centre) picks a cell size from the
 * radius, the cell holding the centre and its 8 neighbours; neighbours
 * wholly outside the shape's bounding box are dropped. Each remaining cell
 * is one contiguous score range [min, max) of the sorted set; every point
 * found there is tested against the shape with the haversine distance on
 * a sphere of radius 6372797.560856 m. The arithmetic is Redis's, step by
 * step, so the same points and the same printed distances come out.
 * Pure functions; any thread. */
#ifndef SHOAL_GEOHASH_H
#define SHOAL_GEOHASH_H
#include <stdint.h>

#define GEO_LONG_MIN -180.0
#define GEO_LONG_MAX 180.0
#define GEO_LAT_MIN -85.05112878
#define GEO_LAT_MAX 85.05112878
#define GEO_STEP_MAX 26

typedef struct geo_bits {
    uint64_t bits;
    uint8_t step; /* bits per coordinate; 0 with bits 0: no cell */
} geo_bits;

enum { GEO_CIRCLE, GEO_BOX };
typedef struct geo_shape {
    int type;
    double xy[2];      /* centre: longitude, latitude */
    double conversion; /* metres per unit */
    double radius;     /* GEO_CIRCLE, in units */
    double width, height; /* GEO_BOX, in units */
} geo_shape;

/* Encodes lon/lat at 26 bits each over Redis's ranges; 0 when outside
 * them. */
int geo_encode(double lon, double lat, geo_bits *h);
/* The same over the standard -90..90 latitude range (GEOHASH strings). */
int geo_encode_std(double lon, double lat, geo_bits *h);
/* The 52-bit score of a 26-step hash (smaller steps shifted left). */
uint64_t geo_align52(geo_bits h);
/* The centre of the cell of a 52-bit score (a score that is not an
 * integer in range is converted as the C cast would, as Redis does). */
int geo_decode_score(double score, double xy[2]);
/* The 11-character GEOHASH string of a score into out[11]. */
void geo_hash_string(double score, char out[11]);

/* The up-to-9 score ranges to scan for a shape: ranges[i] = [min, max);
 * returns how many (cells that are dropped or repeat the previous one are
 * left out, as Redis leaves them out). */
int geo_search_ranges(const geo_shape *s, uint64_t min[9], uint64_t max[9]);
/* 1 and *dist (metres) when the point lies in the shape, else 0. */
int geo_in_shape(const geo_shape *s, double lon, double lat, double *dist);
/* Haversine distance in metres. */
double geo_distance(double lon1, double lat1, double lon2, double lat2);
#endif
