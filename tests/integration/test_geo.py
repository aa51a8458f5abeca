"""Geo commands: GEOADD GEODIST GEOHASH GEOPOS GEOSEARCH GEOSEARCHSTORE
GEORADIUS GEORADIUSBYMEMBER and the _RO forms.

Expectations come from a Python model of Redis's geo arithmetic (52-bit
interleaved geohash over -180..180 / -85.05112878..85.05112878, cell-centre
decoding, haversine on a 6372797.560856 m sphere), not from fixed
numbers: scores, positions, GEOHASH strings, printed distances and the
members a search finds (away from the shape's edge) must be the model's.
Plus option handling, error texts, and stores into keys on other shards."""
import math
import random

import pytest
import redis

LAT_MAX = 85.05112878
R_EARTH = 6372797.560856
UNITS = {"m": 1.0, "km": 1000.0, "ft": 0.3048, "mi": 1609.34}


def interleave(x, y):
    r = 0
    for i in range(32):
        r |= ((x >> i) & 1) << (2 * i)
        r |= ((y >> i) & 1) << (2 * i + 1)
    return r


def encode(lon, lat, lat_min=-LAT_MAX, lat_max=LAT_MAX):
    lat_off = (lat - lat_min) / (lat_max - lat_min) * (1 << 26)
    lon_off = (lon + 180.0) / 360.0 * (1 << 26)
    return interleave(int(lat_off), int(lon_off))


def decode(score):
    bits = int(score)
    x = y = 0
    for i in range(32):
        x |= ((bits >> (2 * i)) & 1) << i
        y |= ((bits >> (2 * i + 1)) & 1) << i
    cells = float(1 << 26)
    lat_min = -LAT_MAX + (x * 1.0 / cells) * (2 * LAT_MAX)
    lat_max = -LAT_MAX + ((x + 1) * 1.0 / cells) * (2 * LAT_MAX)
    lon_min = -180.0 + (y * 1.0 / cells) * 360.0
    lon_max = -180.0 + ((y + 1) * 1.0 / cells) * 360.0
    lon = min(180.0, max(-180.0, (lon_min + lon_max) / 2))
    lat = min(LAT_MAX, max(-LAT_MAX, (lat_min + lat_max) / 2))
    return lon, lat


def dist(lon1, lat1, lon2, lat2):
    d_r = math.pi / 180.0
    la1, lo1, la2, lo2 = lat1 * d_r, lon1 * d_r, lat2 * d_r, lon2 * d_r
    u = math.sin((la2 - la1) / 2)
    v = math.sin((lo2 - lo1) / 2)
    return 2.0 * R_EARTH * math.asin(math.sqrt(u * u + math.cos(la1) * math.cos(la2) * v * v))


def geohash_string(score):
    lon, lat = decode(score)
    bits = encode(lon, lat, -90.0, 90.0)
    alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
    return "".join(alphabet[(bits >> (52 - (i + 1) * 5)) & 31] for i in range(10)) + "0"


@pytest.fixture
def g(r):
    """r with redis-py's parsing of geo replies turned off (raw replies)."""
    for name in ("GEOPOS", "GEOHASH", "GEODIST", "GEOSEARCH", "GEOSEARCHSTORE", "GEORADIUS", "GEORADIUS_RO",
                 "GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"):
        r.response_callbacks.pop(name, None)
    return r


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


def points(n, seed, lon0, lat0, spread):
    rnd = random.Random(seed)
    pts = {}
    for i in range(n):
        pts["p%d" % i] = (lon0 + rnd.uniform(-spread, spread), lat0 + rnd.uniform(-spread / 2, spread / 2))
    return pts


def add(r, key, pts):
    args = []
    for m, (lon, lat) in pts.items():
        args += [repr(lon), repr(lat), m]
    return r.execute_command("GEOADD", key, *args)


def test_geoadd_scores_and_flags(g):
    r = g
    pts = points(50, 1, 13.4, 52.5, 2.0)
    assert add(r, "g", pts) == 50
    for m, (lon, lat) in pts.items():
        assert r.zscore("g", m) == encode(lon, lat)
    assert r.execute_command("GEOADD", "g", "1", "1", "p0", "2", "2", "new") == 1
    assert r.execute_command("GEOADD", "g", "CH", "3", "3", "p0", "2", "2", "new", "4", "4", "new2") == 2
    assert r.execute_command("GEOADD", "g", "NX", "CH", "5", "5", "p0", "5", "5", "nx") == 1
    assert r.zscore("g", "p0") == encode(3, 3)
    assert r.execute_command("GEOADD", "g", "XX", "6", "6", "p0", "6", "6", "xx") == 0
    assert r.zscore("g", "p0") == encode(6, 6) and r.zscore("g", "xx") is None
    assert r.execute_command("GEOADD", "g", "XX", "CH", "7", "7", "p0") == 1
    assert r.execute_command("GEOADD", "missing", "XX", "1", "1", "a") == 0
    assert r.exists("missing") == 0
    assert r.type("g") == b"zset"


def test_geoadd_errors(g):
    r = g
    assert err(r, "GEOADD", "g", "200", "100", "x") == "invalid longitude,latitude pair 200.000000,100.000000"
    assert err(r, "GEOADD", "g", "10", "85.06", "x") == "invalid longitude,latitude pair 10.000000,85.060000"
    assert err(r, "GEOADD", "g", "1.5", "abc", "x") == "value is not a valid float"
    assert err(r, "GEOADD", "g", "NX", "XX", "1", "1", "x") == "syntax error"
    assert err(r, "GEOADD", "g", "NX", "1", "1") == "syntax error"
    assert err(r, "GEOADD", "g", "GT", "1", "1", "x") == "syntax error"
    assert err(r, "GEOADD", "g", "1", "1") == "wrong number of arguments for 'geoadd' command"
    # one bad pair rejects the whole command
    assert err(r, "GEOADD", "g", "1", "1", "ok", "1", "91", "bad").startswith("invalid longitude,latitude")
    assert r.exists("g") == 0
    r.set("s", "x")
    assert err(r, "GEOADD", "s", "1", "1", "x").startswith("WRONGTYPE")


def test_pos_hash_dist(g):
    r = g
    pts = points(40, 2, -73.9, 40.7, 30.0)
    pts["edge"] = (180.0, LAT_MAX)
    pts["edge2"] = (-180.0, -LAT_MAX)
    add(r, "g", pts)
    names = list(pts)
    pos = r.geopos("g", *names, "nosuch")
    assert pos[-1] is None
    for m, p in zip(names, pos):
        lon, lat = decode(encode(*pts[m]))
        px, py = float(p[0]), float(p[1])
        assert px == pytest.approx(lon, abs=1e-12) and py == pytest.approx(lat, abs=1e-12)
        assert abs(px - pts[m][0]) < 1e-5 and abs(py - pts[m][1]) < 1e-5
    hashes = r.geohash("g", *names, "nosuch")
    assert hashes[-1] is None
    for m, h in zip(names, hashes):
        assert h.decode() == geohash_string(encode(*pts[m]))
    for a, b in zip(names, names[1:] + names[:1]):
        for unit, conv in UNITS.items():
            want = "%.4f" % (dist(*decode(encode(*pts[a])), *decode(encode(*pts[b]))) / conv)
            assert r.execute_command("GEODIST", "g", a, b, unit.upper()) == want.encode()
    assert r.execute_command("GEODIST", "g", names[0], "nosuch") is None
    assert r.execute_command("GEODIST", "nokey", "a", "b") is None
    assert r.geopos("nokey", "a", "b") == [None, None]
    assert r.geohash("nokey", "a") == [None]
    assert err(r, "GEODIST", "g", "a", "b", "yards") == "unsupported unit provided. please use M, KM, FT, MI"
    assert err(r, "GEODIST", "g", "a", "b", "m", "x") == "syntax error"


def model_search(pts, center, shape, conv):
    """Members in the shape with their distances, and those near its edge
    (within 1 m: cell decoding moves points by up to about 0.6 m)."""
    inside, edge = {}, set()
    cx, cy = center
    for m, p in pts.items():
        lon, lat = decode(encode(*p))
        d = dist(cx, cy, lon, lat)
        if shape[0] == "radius":
            margin = d - shape[1] * conv
        else:
            w, h = shape[1] * conv / 2, shape[2] * conv / 2
            margin = max(dist(lon, lat, cx, lat) - w, dist(lon, lat, lon, cy) - h)
        if abs(margin) < 1.0:
            edge.add(m)
        elif margin < 0:
            inside[m] = d
    return inside, edge


@pytest.mark.parametrize("seed", [3, 4])
def test_search_matches_model(g, seed):
    r = g
    rnd = random.Random(seed)
    lon0, lat0 = rnd.uniform(-170, 170), rnd.uniform(-60, 60)
    pts = points(300, seed, lon0, lat0, 1.0)
    add(r, "g", pts)
    for _ in range(25):
        unit = rnd.choice(list(UNITS))
        conv = UNITS[unit]
        center = (lon0 + rnd.uniform(-0.5, 0.5), lat0 + rnd.uniform(-0.25, 0.25))
        if rnd.random() < 0.5:
            shape = ("radius", rnd.uniform(1000, 60000) / conv)
            by = ["BYRADIUS", repr(shape[1]), unit]
        else:
            shape = ("box", rnd.uniform(1000, 90000) / conv, rnd.uniform(1000, 90000) / conv)
            by = ["BYBOX", repr(shape[1]), repr(shape[2]), unit]
        inside, edge = model_search(pts, center, shape, conv)
        got = r.execute_command("GEOSEARCH", "g", "FROMLONLAT", repr(center[0]), repr(center[1]), *by,
                                "WITHDIST", "ASC")
        members = [m.decode() for m, _ in got]
        assert set(members) - edge == set(inside)
        for m, d in got:
            m = m.decode()
            if m in inside:
                assert d == ("%.4f" % (inside[m] / conv)).encode()
        dists = [float(d) for _, d in got]
        assert dists == sorted(dists)
        if shape[0] == "radius":
            plain = r.execute_command("GEORADIUS", "g", repr(center[0]), repr(center[1]), repr(shape[1]), unit)
            assert sorted(plain) == sorted(m.encode() for m in members)


def test_search_options(g):
    r = g
    pts = points(200, 7, 2.35, 48.85, 0.3)
    add(r, "g", pts)
    c = ["FROMLONLAT", "2.35", "48.85", "BYRADIUS", "20", "km"]
    full = r.execute_command("GEOSEARCH", "g", *c, "WITHDIST", "WITHHASH", "WITHCOORD", "ASC")
    assert len(full) > 20
    for m, d, h, (lon, lat) in full:
        assert h == r.zscore("g", m)
        assert (float(lon), float(lat)) == pytest.approx(decode(h), abs=1e-12)
        assert d == ("%.4f" % (dist(2.35, 48.85, *decode(h)) / 1000)).encode()
    names = [x[0] for x in full]
    desc = r.execute_command("GEOSEARCH", "g", *c, "DESC")
    assert [float(x[1]) for x in full] == sorted(float(x[1]) for x in full)
    assert desc[0] == names[-1] and sorted(desc) == sorted(names)
    # COUNT alone sorts ascending; DESC COUNT gives the farthest
    assert r.execute_command("GEOSEARCH", "g", *c, "COUNT", "5") == names[:5]
    assert r.execute_command("GEOSEARCH", "g", *c, "COUNT", "5", "DESC") == names[::-1][:5]
    anyres = r.execute_command("GEOSEARCH", "g", *c, "COUNT", "7", "ANY")
    assert len(anyres) == 7 and set(anyres) <= set(names)
    assert r.execute_command("GEOSEARCH", "g", *c, "COUNT", "1000") == names
    # FROMMEMBER: the member's own position is the centre
    m0 = names[3].decode()
    by_member = r.execute_command("GEOSEARCH", "g", "FROMMEMBER", m0, "BYRADIUS", "5", "km", "ASC")
    assert by_member[0] == names[3]
    assert r.execute_command("GEORADIUSBYMEMBER", "g", m0, "5", "km", "ASC") == by_member
    assert r.execute_command("GEORADIUSBYMEMBER_RO", "g", m0, "5", "km", "ASC") == by_member
    assert r.execute_command("GEORADIUS_RO", "g", "2.35", "48.85", "20", "km", "ASC") == names
    # empty results
    assert r.execute_command("GEOSEARCH", "g", "FROMLONLAT", "-100", "0", "BYRADIUS", "1", "km") == []
    assert r.execute_command("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYBOX", "1", "1", "km") == []
    assert r.execute_command("GEORADIUSBYMEMBER", "nokey", "x", "bad", "units") == []


def test_search_errors(g):
    r = g
    add(r, "g", {"a": (13.361389, 38.115556), "b": (15.087269, 37.502669)})
    e = lambda *a: err(r, *a)
    assert e("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", "-1", "km") == "radius cannot be negative"
    assert e("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", "x", "km") == "need numeric radius"
    assert e("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", "1", "yd") == \
        "unsupported unit provided. please use M, KM, FT, MI"
    assert e("GEOSEARCH", "g", "FROMMEMBER", "zz", "BYRADIUS", "1", "km") == "could not decode requested zset member"
    assert e("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "-1", "2", "km") == \
        "height or width cannot be negative"
    assert e("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "a", "2", "km") == "need numeric width"
    assert e("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "1", "b", "km") == "need numeric height"
    assert e("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "COUNT", "0") == "COUNT must be > 0"
    assert e("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "COUNT", "x") == \
        "value is not an integer or out of range"
    assert e("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "ANY") == \
        "the ANY argument requires COUNT argument"
    assert e("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "FROMMEMBER", "a", "BYRADIUS", "1", "km") == "syntax error"
    assert e("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km") == \
        "syntax error"
    assert e("GEOSEARCH", "g", "BYRADIUS", "1", "km", "WITHDIST", "ASC") == \
        "exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH"
    assert e("geosearch", "g", "FROMLONLAT", "1", "2", "WITHDIST", "ASC") == \
        "exactly one of BYRADIUS and BYBOX can be specified for geosearch"
    assert e("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STORE", "x") == "syntax error"
    assert e("GEORADIUS_RO", "g", "1", "2", "1", "km", "STORE", "x") == "syntax error"
    assert e("GEORADIUS", "g", "1", "2", "1", "km", "STORE", "x", "WITHDIST") == \
        "STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
    assert e("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "WITHHASH") == \
        "GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
    assert e("GEORADIUS", "g", "200", "2", "1", "km") == "invalid longitude,latitude pair 200.000000,2.000000"
    r.set("s", "x")
    assert e("GEOSEARCH", "s", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km").startswith("WRONGTYPE")
    assert e("GEOPOS", "s", "a").startswith("WRONGTYPE")


# the same shard, then keys on shards 0 and 3 of 4 (slot mod 4)
@pytest.mark.parametrize("src,dst,missing", [("geo{t}", "out{t}", "nokey{t}"), ("geo:a", "geo:b", "geo:c")])
def test_stores(g, src, dst, missing):
    r = g
    pts = points(120, 9, 100.5, 13.7, 0.2)
    add(r, src, pts)
    c = ["FROMLONLAT", "100.5", "13.7", "BYRADIUS", "10", "km"]
    found = r.execute_command("GEOSEARCH", src, *c, "WITHDIST", "ASC")
    n = r.execute_command("GEOSEARCHSTORE", dst, src, *c)
    assert n == len(found) > 0
    assert r.zrange(dst, 0, -1, withscores=True) == sorted(
        ((m, r.zscore(src, m)) for m, _ in found), key=lambda x: (x[1], x[0]))
    assert r.execute_command("GEOSEARCHSTORE", dst, src, *c, "STOREDIST", "COUNT", "3") == 3
    stored = r.zrange(dst, 0, -1, withscores=True)
    assert [m for m, _ in stored] == [m for m, _ in found[:3]]
    for (m, s), (_, d) in zip(stored, found):
        assert ("%.4f" % s).encode() == d
    r.expire(dst, 100)
    assert r.execute_command("GEORADIUS", src, "100.5", "13.7", "10", "km", "STORE", dst) == len(found)
    assert r.ttl(dst) == -1 and r.zcard(dst) == len(found)
    assert r.execute_command("GEORADIUSBYMEMBER", src, found[0][0], "1", "m", "STOREDIST", dst) >= 1
    assert r.zscore(dst, found[0][0]) == 0.0
    # nothing found, or no source: the destination is deleted
    assert r.execute_command("GEOSEARCHSTORE", dst, src, "FROMLONLAT", "0", "0", "BYRADIUS", "1", "m") == 0
    assert r.exists(dst) == 0
    r.zadd(dst, {"x": 1})
    assert r.execute_command("GEORADIUS", missing, "0", "0", "1", "m", "STORE", dst) == 0
    assert r.exists(dst) == 0
