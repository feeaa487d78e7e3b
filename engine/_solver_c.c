/* The trick-play solver's core in C: boneyard.engine._solver_c.Core.
 *
 * The same algorithm as engine/_solver_core.py, line for line: the same legal moves, move
 * ordering, merging of equivalent tiles and fail-soft alpha-beta, so both return the same values
 * (tests/solver/test_cores_agree.py). Only the transposition table differs: here a fixed table of
 * 2^tt_bits entries in buckets of two (one kept for the largest position, one always replaced),
 * which changes the nodes a search visits, never a value. Read engine/solver.py for the API and
 * the objective, engine/_solver_core.py for the commented reference.
 *
 * Tiles are 0..27, sets of tiles 28-bit masks, seats 0..6, suits 0..7 (7: the doubles when they
 * form a suit). Built by the package's install (pyproject.toml, [tool.setuptools] ext-modules).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TILES 28
#define SUITS 8
#define MAXP 7
#define INFINITY_VALUE (1 << 20)

static PyObject *SearchAborted; /* boneyard.engine._solver_core.SearchAborted, shared with the fallback */

typedef struct {
    uint32_t hands[MAXP];
    int16_t lower, upper;
    int8_t leader;
    int8_t best;
    uint8_t size; /* tiles left (0: an empty entry); the entry kept in slot 0 is the largest */
    uint8_t pad;
} Entry;

typedef struct {
    PyObject_HEAD
    int8_t lead_suit[TILES];
    uint32_t members[SUITS];
    int16_t power[SUITS][TILES];
    uint32_t trumps;
    int may_trump;
    int points[TILES];
    int trick_value;
    int players, active, side, scorers, trick_size;
    int next_seat[MAXP];
    uint32_t higher[SUITS][TILES];
    uint32_t leaders[SUITS];
    int rank[TILES];
    uint32_t opponents[MAXP];
    Entry *tt;
    uint64_t tt_mask;
    int tt_bits;
    long long nodes, node_limit;
    int aborted;
} Core;

typedef struct {
    uint32_t hands[MAXP];
    int seat[MAXP], tile[MAXP];
    int len;
} Pos;

static inline int lowest(uint32_t m) { return __builtin_ctz(m); }
static inline int popcount(uint32_t m) { return __builtin_popcount(m); }

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint32_t legal(const Core *c, uint32_t held, int lead) {
    if (lead < 0) return held;
    int led = c->lead_suit[lead];
    uint32_t follow = held & c->members[led];
    if (!follow) return held;
    if (c->may_trump && !((c->trumps >> lead) & 1)) return follow | (held & c->trumps);
    return follow;
}

static int winner_of(const Core *c, const Pos *p) {
    const int16_t *power = c->power[(int)c->lead_suit[p->tile[0]]];
    int seat = p->seat[0], best = power[p->tile[0]];
    for (int i = 1; i < p->len; i++) {
        if (power[p->tile[i]] > best) {
            seat = p->seat[i];
            best = power[p->tile[i]];
        }
    }
    return seat;
}

/* Sort moves by score descending, then tile ascending (as Python's sort by (-score, tile)). */
static int order_moves(const Core *c, uint32_t moves, int seat, const Pos *p, int best, int *out) {
    int score[TILES], n = 0;
    int mine = (c->side >> seat) & 1;
    if (p->len == 0) {
        uint32_t opponents = c->opponents[seat];
        for (uint32_t m = moves; m; m &= m - 1) {
            int t = lowest(m);
            int led = c->lead_suit[t];
            uint32_t above = c->higher[led][t];
            int beaten = 0;
            for (uint32_t o = opponents; o; o &= o - 1) {
                uint32_t h = p->hands[lowest(o)];
                uint32_t follow = h & c->members[led];
                uint32_t reach;
                if (follow) reach = c->may_trump ? (follow | (h & c->trumps)) : follow;
                else reach = h;
                if (reach & above) {
                    beaten = 1;
                    break;
                }
            }
            int s = c->power[led][t] + (beaten ? 0 : 200 + 4 * c->points[t]);
            if (t == best) s = 10000;
            out[n] = t;
            score[n] = s;
            n++;
        }
    } else {
        int led = c->lead_suit[p->tile[0]];
        const int16_t *power = c->power[led];
        int win_seat = p->seat[0], win_power = power[p->tile[0]];
        for (int i = 1; i < p->len; i++) {
            if (power[p->tile[i]] > win_power) {
                win_seat = p->seat[i];
                win_power = power[p->tile[i]];
            }
        }
        int ours = (((c->side >> win_seat) & 1) == mine);
        for (uint32_t m = moves; m; m &= m - 1) {
            int t = lowest(m);
            int pw = power[t], s;
            if (pw > win_power) s = ours ? (100 + c->points[t]) : (400 - pw + 4 * c->points[t]);
            else if (ours) s = 300 + 4 * c->points[t] - (c->rank[t] >> 2);
            else s = 200 - 4 * c->points[t] - (c->rank[t] >> 2);
            out[n] = t;
            score[n] = s;
            n++;
        }
    }
    for (int i = 1; i < n; i++) {
        int t = out[i], s = score[i], j = i - 1;
        while (j >= 0 && (score[j] < s || (score[j] == s && out[j] > t))) {
            out[j + 1] = out[j];
            score[j + 1] = score[j];
            j--;
        }
        out[j + 1] = t;
        score[j + 1] = s;
    }
    return n;
}

/* Keep the moves not equivalent to a move kept before them; rep[i] is the kept move standing
 * for moves[i]. Returns how many were kept (into kept). */
static int merge_moves(const Core *c, const int *moves, int n, uint32_t others, uint32_t remaining,
                       int led, int *kept, int *rep) {
    int live[SUITS], nlive = 0, k = 0;
    for (int s = 0; s < SUITS; s++)
        if ((remaining & c->leaders[s]) || s == led) live[nlive++] = s;
    for (int i = 0; i < n; i++) {
        int b = moves[i], r = b;
        for (int j = 0; j < k; j++) {
            int a = kept[j];
            if (c->points[a] != c->points[b] || c->lead_suit[a] != c->lead_suit[b] ||
                ((c->trumps >> a) & 1) != ((c->trumps >> b) & 1))
                continue;
            int same = 1;
            for (int x = 0; x < nlive; x++) {
                int s = live[x];
                if (((c->members[s] >> a) & 1) != ((c->members[s] >> b) & 1)) {
                    same = 0;
                    break;
                }
                int pa = c->power[s][a], pb = c->power[s][b];
                if (pa == pb) continue;
                int hi = pa > pb ? a : b, lo = pa > pb ? b : a;
                if (c->higher[s][lo] & ~c->higher[s][hi] & ~(1u << hi) & others) {
                    same = 0;
                    break;
                }
            }
            if (same) {
                r = a;
                break;
            }
        }
        if (r == b) kept[k++] = b;
        if (rep) rep[i] = r;
    }
    return k;
}

static Entry *tt_find(Core *c, const Pos *p, int leader, uint64_t *hash_out) {
    uint64_t h = (uint64_t)(leader + 1);
    for (int s = 0; s < c->players; s++) h = mix64(h * 0x9E3779B97F4A7C15ULL + p->hands[s]);
    *hash_out = h;
    Entry *bucket = &c->tt[(h & c->tt_mask) & ~1ULL];
    for (int i = 0; i < 2; i++) {
        Entry *e = &bucket[i];
        if (e->leader != leader || e->size == 0) continue;
        if (memcmp(e->hands, p->hands, sizeof(uint32_t) * c->players) == 0) return e;
    }
    return NULL;
}

static void tt_store(Core *c, const Pos *p, int leader, uint64_t h, int lower, int upper, int best,
                     int size) {
    Entry *bucket = &c->tt[(h & c->tt_mask) & ~1ULL];
    Entry *e = NULL;
    for (int i = 0; i < 2; i++) {
        if (bucket[i].leader == leader && bucket[i].size &&
            memcmp(bucket[i].hands, p->hands, sizeof(uint32_t) * c->players) == 0) {
            e = &bucket[i];
            break;
        }
    }
    if (!e) {
        if (bucket[0].size == 0 || size >= bucket[0].size) {
            bucket[1] = bucket[0];
            e = &bucket[0];
        } else {
            e = &bucket[1];
        }
    }
    memset(e, 0, sizeof(Entry));
    memcpy(e->hands, p->hands, sizeof(uint32_t) * c->players);
    e->leader = (int8_t)leader;
    e->lower = (int16_t)lower;
    e->upper = (int16_t)(upper > 32767 ? 32767 : upper);
    e->best = (int8_t)best;
    e->size = (uint8_t)size;
}

static int search(Core *c, Pos *p, int leader, int alpha, int beta, int pending) {
    c->nodes++;
    if (c->node_limit && c->nodes > c->node_limit) {
        c->aborted = 1;
        return 0;
    }
    uint32_t remaining = 0;
    for (int s = 0; s < c->players; s++) remaining |= p->hands[s];
    if (!remaining) return 0;
    int tricks_left = (popcount(remaining) + p->len) / c->trick_size;
    int ceiling = tricks_left * c->trick_value + pending;
    for (uint32_t m = remaining; m; m &= m - 1) ceiling += c->points[lowest(m)];
    if (tricks_left == 1) {
        /* The last trick: every seat still to play holds one tile, so the plays are forced. */
        Pos last = *p;
        int seat = last.len ? c->next_seat[last.seat[last.len - 1]] : leader;
        while (last.len < c->trick_size) {
            last.seat[last.len] = seat;
            last.tile[last.len] = lowest(p->hands[seat]);
            last.len++;
            seat = c->next_seat[seat];
        }
        return ((c->scorers >> winner_of(c, &last)) & 1) ? ceiling : 0;
    }
    if (ceiling <= alpha) return ceiling;
    if (beta <= 0) return 0;

    int best_move = -1, seat, have_entry = 0, old_lower = 0, old_upper = INFINITY_VALUE;
    uint64_t hash = 0;
    if (p->len == 0) {
        Entry *e = tt_find(c, p, leader, &hash);
        if (e) {
            int lower = e->lower, upper = e->upper >= 32767 ? INFINITY_VALUE : e->upper;
            best_move = e->best;
            if (lower >= beta) return lower;
            if (upper <= alpha) return upper;
            if (lower == upper) return lower;
            if (lower > alpha) alpha = lower;
            if (upper < beta) beta = upper;
            have_entry = 1;
            old_lower = lower;
            old_upper = upper;
        }
        seat = leader;
    } else {
        seat = c->next_seat[p->seat[p->len - 1]];
    }
    uint32_t held = p->hands[seat];
    int lead = p->len ? p->tile[0] : -1;
    uint32_t moves = legal(c, held, lead);
    int ordered[TILES], kept[TILES];
    int n = order_moves(c, moves, seat, p, best_move, ordered);
    int *list = ordered;
    if (n > 1) {
        uint32_t others = remaining & ~held;
        for (int i = 0; i < p->len; i++) others |= 1u << p->tile[i];
        n = merge_moves(c, ordered, n, others, remaining, lead >= 0 ? c->lead_suit[lead] : -1, kept,
                        NULL);
        list = kept;
    }
    int maximise = (c->side >> seat) & 1;
    int best = maximise ? -1 : INFINITY_VALUE, chosen = -1;
    int a = alpha, b = beta;
    for (int i = 0; i < n; i++) {
        int t = list[i], v;
        p->hands[seat] = held & ~(1u << t);
        p->seat[p->len] = seat;
        p->tile[p->len] = t;
        p->len++;
        if (p->len == c->trick_size) {
            int winner = winner_of(c, p);
            int gain = ((c->scorers >> winner) & 1) ? pending + c->points[t] + c->trick_value : 0;
            Pos saved_trick;
            memcpy(saved_trick.seat, p->seat, sizeof(p->seat));
            memcpy(saved_trick.tile, p->tile, sizeof(p->tile));
            int len = p->len;
            p->len = 0;
            v = gain + search(c, p, winner, a - gain, b - gain, 0);
            memcpy(p->seat, saved_trick.seat, sizeof(p->seat));
            memcpy(p->tile, saved_trick.tile, sizeof(p->tile));
            p->len = len;
        } else {
            v = search(c, p, leader, a, b, pending + c->points[t]);
        }
        p->len--;
        p->hands[seat] = held;
        if (c->aborted) return 0;
        if (maximise) {
            if (v > best) {
                best = v;
                chosen = t;
                if (best > a) {
                    a = best;
                    if (a >= b) break;
                }
            }
        } else {
            if (v < best) {
                best = v;
                chosen = t;
                if (best < b) {
                    b = best;
                    if (a >= b) break;
                }
            }
        }
    }
    if (p->len == 0) {
        int lower = have_entry ? old_lower : 0, upper = have_entry ? old_upper : INFINITY_VALUE;
        if (best <= alpha) {
            if (best < upper) upper = best;
        } else if (best >= beta) {
            if (best > lower) lower = best;
        } else {
            lower = upper = best;
        }
        tt_store(c, p, leader, hash, lower, upper, chosen, popcount(remaining));
    }
    return best;
}

/* ---------------------------------------------------------------- Python glue */

static int read_ints(PyObject *seq, int n, long long *out, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s needs %d entries", what, n);
        Py_DECREF(fast);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (out[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

static int Core_init(Core *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"lead_suit", "members", "power",   "trumps",  "may_trump",
                             "points",    "trick_value", "players", "active", "side",
                             "scorers",   "tt_bits", NULL};
    PyObject *lead_suit, *members, *power, *points;
    long long trumps;
    int may_trump, trick_value, players, active, side, scorers, tt_bits = 18;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOLpOiiiii|i", kwlist, &lead_suit, &members,
                                     &power, &trumps, &may_trump, &points, &trick_value, &players,
                                     &active, &side, &scorers, &tt_bits))
        return -1;
    if (players < 2 || players > MAXP) {
        PyErr_Format(PyExc_ValueError, "players must be 2..7, not %d", players);
        return -1;
    }
    if (tt_bits < 4 || tt_bits > 26) {
        PyErr_Format(PyExc_ValueError, "tt_bits must be 4..26, not %d", tt_bits);
        return -1;
    }
    long long buf[TILES];
    if (read_ints(lead_suit, TILES, buf, "lead_suit") < 0) return -1;
    for (int t = 0; t < TILES; t++) c->lead_suit[t] = (int8_t)buf[t];
    if (read_ints(members, SUITS, buf, "members") < 0) return -1;
    for (int s = 0; s < SUITS; s++) c->members[s] = (uint32_t)buf[s];
    PyObject *rows = PySequence_Fast(power, "power");
    if (!rows) return -1;
    if (PySequence_Fast_GET_SIZE(rows) != SUITS) {
        PyErr_SetString(PyExc_ValueError, "power needs 8 rows");
        Py_DECREF(rows);
        return -1;
    }
    for (int s = 0; s < SUITS; s++) {
        if (read_ints(PySequence_Fast_GET_ITEM(rows, s), TILES, buf, "power row") < 0) {
            Py_DECREF(rows);
            return -1;
        }
        for (int t = 0; t < TILES; t++) c->power[s][t] = (int16_t)buf[t];
    }
    Py_DECREF(rows);
    if (read_ints(points, TILES, buf, "points") < 0) return -1;
    for (int t = 0; t < TILES; t++) c->points[t] = (int)buf[t];
    c->trumps = (uint32_t)trumps;
    c->may_trump = may_trump;
    c->trick_value = trick_value;
    c->players = players;
    c->active = active;
    c->side = side;
    c->scorers = scorers;
    c->trick_size = 0;
    for (int s = 0; s < players; s++) c->trick_size += (active >> s) & 1;
    if (c->trick_size < 2) {
        PyErr_SetString(PyExc_ValueError, "at least two seats must be in play");
        return -1;
    }
    for (int s = 0; s < players; s++) {
        for (int i = 1; i <= players; i++) {
            int o = (s + i) % players;
            if ((active >> o) & 1) {
                c->next_seat[s] = o;
                break;
            }
        }
        c->opponents[s] = 0;
        for (int o = 0; o < players; o++)
            if (((active >> o) & 1) && (((side >> o) & 1) != ((side >> s) & 1)))
                c->opponents[s] |= 1u << o;
    }
    for (int s = 0; s < SUITS; s++) {
        c->leaders[s] = 0;
        for (int t = 0; t < TILES; t++) {
            uint32_t m = 0;
            for (int u = 0; u < TILES; u++)
                if (c->power[s][u] > c->power[s][t]) m |= 1u << u;
            c->higher[s][t] = m;
            if (c->lead_suit[t] == s) c->leaders[s] |= 1u << t;
        }
    }
    for (int t = 0; t < TILES; t++) {
        int r = c->power[0][t];
        for (int s = 1; s < SUITS; s++)
            if (c->power[s][t] > r) r = c->power[s][t];
        c->rank[t] = r;
    }
    free(c->tt);
    c->tt_bits = tt_bits;
    c->tt_mask = (1ULL << tt_bits) - 1;
    c->tt = (Entry *)calloc((size_t)1 << tt_bits, sizeof(Entry)); /* all empty (size 0) */
    if (!c->tt) {
        PyErr_NoMemory();
        return -1;
    }
    c->nodes = 0;
    c->node_limit = 0;
    c->aborted = 0;
    return 0;
}

static void Core_dealloc(Core *c) {
    free(c->tt);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *Core_clear(Core *c, PyObject *unused) {
    memset(c->tt, 0, sizeof(Entry) << c->tt_bits);
    Py_RETURN_NONE;
}

static int read_position(Core *c, PyObject *hands, PyObject *trick, int leader, Pos *p) {
    long long buf[MAXP];
    if (read_ints(hands, c->players, buf, "hands") < 0) return -1;
    for (int s = 0; s < MAXP; s++) p->hands[s] = s < c->players ? (uint32_t)buf[s] : 0;
    PyObject *plays = PySequence_Fast(trick, "trick");
    if (!plays) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(plays);
    if (n >= c->trick_size) {
        PyErr_SetString(PyExc_ValueError, "the trick in progress is already complete");
        Py_DECREF(plays);
        return -1;
    }
    p->len = (int)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        long long pair[2];
        if (read_ints(PySequence_Fast_GET_ITEM(plays, i), 2, pair, "play") < 0) {
            Py_DECREF(plays);
            return -1;
        }
        if (pair[0] < 0 || pair[0] >= c->players || pair[1] < 0 || pair[1] >= TILES) {
            PyErr_SetString(PyExc_ValueError, "a play is (seat, tile)");
            Py_DECREF(plays);
            return -1;
        }
        p->seat[i] = (int)pair[0];
        p->tile[i] = (int)pair[1];
    }
    Py_DECREF(plays);
    if (leader < 0 || leader >= c->players) {
        PyErr_Format(PyExc_ValueError, "no seat %d", leader);
        return -1;
    }
    return 0;
}

static PyObject *aborted(Core *c) {
    c->aborted = 0;
    PyErr_Format(SearchAborted, "node limit %lld reached", c->node_limit);
    return NULL;
}

static PyObject *Core_search(Core *c, PyObject *args) {
    PyObject *hands, *trick;
    int leader, alpha, beta;
    if (!PyArg_ParseTuple(args, "OOiii", &hands, &trick, &leader, &alpha, &beta)) return NULL;
    Pos p;
    if (read_position(c, hands, trick, leader, &p) < 0) return NULL;
    int pending = 0;
    for (int i = 0; i < p.len; i++) pending += c->points[p.tile[i]];
    c->aborted = 0;
    int v = search(c, &p, leader, alpha, beta, pending);
    if (c->aborted) return aborted(c);
    return PyLong_FromLong(v);
}

static PyObject *Core_move_values(Core *c, PyObject *args) {
    PyObject *hands, *trick;
    int leader, alpha = -1, beta = INFINITY_VALUE;
    long long allowed = -1;
    if (!PyArg_ParseTuple(args, "OOi|Lii", &hands, &trick, &leader, &allowed, &alpha, &beta))
        return NULL;
    Pos p;
    if (read_position(c, hands, trick, leader, &p) < 0) return NULL;
    int seat = p.len ? c->next_seat[p.seat[p.len - 1]] : leader;
    uint32_t held = p.hands[seat];
    uint32_t moves = legal(c, held, p.len ? p.tile[0] : -1) & (uint32_t)allowed;
    int pending = 0;
    for (int i = 0; i < p.len; i++) pending += c->points[p.tile[i]];
    uint32_t remaining = 0;
    for (int s = 0; s < c->players; s++) remaining |= p.hands[s];
    uint32_t others = remaining & ~held;
    for (int i = 0; i < p.len; i++) others |= 1u << p.tile[i];
    int ordered[TILES], kept[TILES], rep[TILES], value[TILES];
    int n = order_moves(c, moves, seat, &p, -1, ordered);
    int k = merge_moves(c, ordered, n, others, remaining, p.len ? c->lead_suit[p.tile[0]] : -1, kept,
                        rep);
    c->aborted = 0;
    for (int i = 0; i < k; i++) {
        int t = kept[i], v;
        p.hands[seat] = held & ~(1u << t);
        p.seat[p.len] = seat;
        p.tile[p.len] = t;
        p.len++;
        if (p.len == c->trick_size) {
            int winner = winner_of(c, &p);
            int gain = ((c->scorers >> winner) & 1) ? pending + c->points[t] + c->trick_value : 0;
            Pos child = p;
            child.len = 0;
            v = gain + search(c, &child, winner, alpha - gain, beta - gain, 0);
        } else {
            v = search(c, &p, leader, alpha, beta, pending + c->points[t]);
        }
        p.len--;
        p.hands[seat] = held;
        if (c->aborted) return aborted(c);
        value[t] = v;
    }
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (uint32_t m = moves; m; m &= m - 1) {
        int t = lowest(m), r = t;
        for (int i = 0; i < n; i++)
            if (ordered[i] == t) r = rep[i];
        PyObject *pair = Py_BuildValue("(ii)", t, value[r]);
        if (!pair || PyList_Append(out, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(pair);
    }
    return out;
}

static PyObject *Core_get_nodes(Core *c, void *closure) { return PyLong_FromLongLong(c->nodes); }
static int Core_set_nodes(Core *c, PyObject *value, void *closure) {
    long long v = value ? PyLong_AsLongLong(value) : 0;
    if (v == -1 && PyErr_Occurred()) return -1;
    c->nodes = v;
    return 0;
}
static PyObject *Core_get_limit(Core *c, void *closure) { return PyLong_FromLongLong(c->node_limit); }
static int Core_set_limit(Core *c, PyObject *value, void *closure) {
    long long v = value ? PyLong_AsLongLong(value) : 0;
    if (v == -1 && PyErr_Occurred()) return -1;
    c->node_limit = v < 0 ? 0 : v;
    return 0;
}

static PyGetSetDef Core_getset[] = {
    {"nodes", (getter)Core_get_nodes, (setter)Core_set_nodes, "positions visited", NULL},
    {"node_limit", (getter)Core_get_limit, (setter)Core_set_limit,
     "stop (SearchAborted) past this many nodes; 0: never", NULL},
    {NULL},
};

static PyMethodDef Core_methods[] = {
    {"search", (PyCFunction)Core_search, METH_VARARGS,
     "search(hands, trick, leader, alpha, beta) -> fail-soft alpha-beta value"},
    {"move_values", (PyCFunction)Core_move_values, METH_VARARGS,
     "move_values(hands, trick, leader, allowed=-1, alpha=-1, beta=2**20) -> [(tile, value)]"},
    {"clear", (PyCFunction)Core_clear, METH_NOARGS, "forget every position solved"},
    {NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "boneyard.engine._solver_c.Core",
    .tp_doc = "The trick-play solver's core (see engine/_solver_core.py, the same in Python).",
    .tp_basicsize = sizeof(Core),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_methods = Core_methods,
    .tp_getset = Core_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "boneyard.engine._solver_c",
    "The trick-play solver's core in C (boneyard.engine.solver is the API).", -1, NULL,
};

PyMODINIT_FUNC PyInit__solver_c(void) {
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *fallback = PyImport_ImportModule("boneyard.engine._solver_core");
    if (!fallback) return NULL;
    SearchAborted = PyObject_GetAttrString(fallback, "SearchAborted");
    Py_DECREF(fallback);
    if (!SearchAborted) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) {
        Py_DECREF(&CoreType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(SearchAborted);
    if (PyModule_AddObject(m, "SearchAborted", SearchAborted) < 0) {
        Py_DECREF(SearchAborted);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
