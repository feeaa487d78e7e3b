/* The play phase of the decider in C: boneyard.engine._decider_c.{decide, evolve, legal_actions}.
 *
 * engine/decider.py is the engine and the reference; this core takes over only its hottest
 * paths, the legal plays of the seat on turn, a well-formed play of that seat, and folding
 * TilePlayed and TrickWon, and hands everything else (every other command and event, every
 * refusal, nello's seats sitting out, the end of a hand, any state or value of an unexpected
 * type) to the pure-Python functions, so that both give the same answers: the same cached
 * command and event objects, the same exceptions, equal states
 * (tests/engine/test_decider_cores_agree.py). It builds states exactly as the Python builders
 * do (_tile_played, _trick_won, _with_hand): a new object of the class by object.__new__, its
 * instance dict filled from the old one's, then the fields the event changes.
 *
 * Nothing of the rules is duplicated here: decider.py passes its classes, enum members, cached
 * tables and fallbacks to init() at import. Tiles are 0..27, sets of tiles 28-bit masks, seats
 * 0..6. Built by the package's install (pyproject.toml, [tool.setuptools] ext-modules); optional.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "structmember.h"

#define TILES 28
#define MAXP 7
#define MOST_POINTS 64

/* What init() was given (strong references, kept for the life of the process). */
static PyTypeObject *GameStateType, *HandStateType, *PlayTileType, *TilePlayedType, *TrickWonType,
    *ContractType, *SuitTableType, *RulesetType, *TrickType;
static PyObject *PHASE_PLAY, *KIND_SEVENS, *KIND_NELLO;
static PyObject *pure_decide, *pure_evolve, *pure_legal_actions, *trick_ends, *hand_may_end;
static PyObject *decider_globals; /* decider's namespace: `_prepared` lives there, shared */
static PyObject *tables;          /* the tuples below' owners: their items are borrowed */
static PyObject *plays[MAXP][TILES], *tile_played[MAXP][TILES], *pairs[MAXP][TILES],
    *without[TILES], *trick_won[MAXP][MOST_POINTS];
static int trick_won_len;
static int count[TILES], distance[TILES];
static PyObject *empty_tuple;
static int ready;

/* Offsets of the slots of the slotted dataclasses read here (from their member descriptors). */
static Py_ssize_t o_cmd_seat, o_cmd_tile, o_tp_seat, o_tp_tile, o_tw_seat, o_tw_points, o_kind,
    o_trumps, o_lead_suit, o_members, o_power, o_trick_plays, o_trick_winner, o_trick_points,
    o_players, o_may_trump, o_leads_trump, o_is_moon, o_end_decided, o_hand_size, o_team_of;

/* Interned field names of GameState and HandState, and decider's `_prepared`. */
static PyObject *s_phase, *s_hand, *s_rules, *s_turn, *s_hands, *s_contract, *s_table, *s_trick,
    *s_tricks, *s_bidder, *s_sitting_out, *s_taken, *s_prepared;

/* Return codes of the helpers: done, "not handled here" (no exception: the caller falls back to
 * the pure-Python function, which answers, or raises what it always raised), or an error set. */
#define OK 0
#define PASS (-1)
#define ERR (-2)

static inline PyObject *slot(PyObject *obj, Py_ssize_t offset) {
    return *(PyObject **)((char *)obj + offset);
}

/* The instance dict of a GameState or HandState, borrowed (the object holds it). */
static inline PyObject *dict_of(PyObject *obj) {
    PyObject *d = PyObject_GenericGetDict(obj, NULL);
    if (!d) return NULL;
    Py_DECREF(d);
    return d;
}

/* A field, borrowed; NULL without an exception when it is missing (not handled here). */
static inline PyObject *field(PyObject *d, PyObject *name) {
    return PyDict_GetItemWithError(d, name);
}

/* An exact int in [lo, hi), else PASS (a bool, a float or anything out of range is for Python). */
static inline int small_int(PyObject *v, long lo, long hi, long *out) {
    if (!v || !PyLong_CheckExact(v)) return PASS;
    int overflow;
    long x = PyLong_AsLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return PASS;
    }
    if (x < lo || x >= hi) return PASS;
    *out = x;
    return OK;
}

/* A bool field of the ruleset, as Python's truth of it (only real bools are handled here). */
static inline int flag(PyObject *v) { return v == Py_True ? 1 : v == Py_False ? 0 : PASS; }

static int tuple_int(PyObject *tuple, Py_ssize_t i, long lo, long hi, long *out) {
    if (!tuple || !PyTuple_CheckExact(tuple) || i < 0 || i >= PyTuple_GET_SIZE(tuple)) return PASS;
    return small_int(PyTuple_GET_ITEM(tuple, i), lo, hi, out);
}

/* ---------------------------------------------------------------- legal plays */

static uint32_t nearest_seven(uint32_t tiles) {
    int best = 99;
    uint32_t nearest = 0;
    for (; tiles; tiles &= tiles - 1) {
        uint32_t low = tiles & -tiles;
        int d = distance[__builtin_ctz(tiles)];
        if (d < best) {
            best = d;
            nearest = low;
        } else if (d == best) {
            nearest |= low;
        }
    }
    return nearest;
}

/* play.legal_plays(rules, hand, seat): what seat may play (it is its turn). */
static int legal_mask(PyObject *rules, PyObject *hd, long seat, uint32_t *out) {
    long held, v;
    if (tuple_int(field(hd, s_hands), seat, 0, 1L << TILES, &held)) return PASS;
    PyObject *contract = field(hd, s_contract);
    if (!contract) return PASS;
    if (contract != Py_None) {
        if (Py_TYPE(contract) != ContractType) return PASS;
        PyObject *kind = slot(contract, o_kind);
        if (!kind) return PASS;
        if (kind == KIND_SEVENS) {
            *out = nearest_seven((uint32_t)held);
            return OK;
        }
    }
    PyObject *table = field(hd, s_table), *trick = field(hd, s_trick);
    if (!table || Py_TYPE(table) != SuitTableType || !trick || !PyTuple_CheckExact(trick))
        return PASS;
    long trumps;
    if (small_int(slot(table, o_trumps), 0, 1L << TILES, &trumps)) return PASS;
    if (PyTuple_GET_SIZE(trick) == 0) {
        int leads_trump = flag(slot(rules, o_leads_trump));
        if (leads_trump == PASS) return PASS;
        if (leads_trump) {
            PyObject *tricks = field(hd, s_tricks), *bidder = field(hd, s_bidder);
            if (!tricks || !PyTuple_CheckExact(tricks) || !bidder) return PASS;
            if (PyTuple_GET_SIZE(tricks) == 0 && bidder != Py_None) {
                long b;
                if (small_int(bidder, LONG_MIN, LONG_MAX, &b)) return PASS;
                if (b == seat && (held & trumps)) {
                    *out = (uint32_t)(held & trumps);
                    return OK;
                }
            }
        }
        *out = (uint32_t)held;
        return OK;
    }
    PyObject *first = PyTuple_GET_ITEM(trick, 0);
    long lead, led, members;
    if (tuple_int(first, 1, 0, TILES, &lead)) return PASS;
    if (tuple_int(slot(table, o_lead_suit), lead, 0, 8, &led)) return PASS;
    if (tuple_int(slot(table, o_members), led, 0, 1L << TILES, &members)) return PASS;
    uint32_t follow = (uint32_t)(held & members);
    if (!follow) {
        *out = (uint32_t)held;
        return OK;
    }
    int may_trump = flag(slot(rules, o_may_trump));
    if (may_trump == PASS) return PASS;
    if (may_trump && !((trumps >> lead) & 1)) v = follow | (held & trumps);
    else v = follow;
    *out = (uint32_t)v;
    return OK;
}

/* ---------------------------------------------------------------- builders */

/* object.__new__(cls) with its dict filled from `old` (decider's `_new(cls)` and
 * `new.__dict__.update(old.__dict__)`); the new dict is returned borrowed in *fields. */
static PyObject *copy_of(PyTypeObject *cls, PyObject *old, PyObject **fields) {
#if PY_VERSION_HEX < 0x030C0000
    /* 3.11: a bare allocation (no inline values yet) given a copy of the old dict as its own,
     * which makes the same object in a third of the time: object.__new__ makes inline values
     * that the first look at __dict__ turns into a dict, which the update then replaces. */
    PyObject *new = cls->tp_alloc(cls, 0);
    if (!new) return NULL;
    PyObject *d = PyDict_Copy(old);
    if (!d || PyObject_GenericSetDict(new, d, NULL) < 0) {
        Py_XDECREF(d);
        Py_DECREF(new);
        return NULL;
    }
    Py_DECREF(d); /* the object holds it */
#else
    PyObject *new = PyBaseObject_Type.tp_new(cls, empty_tuple, NULL);
    if (!new) return NULL;
    PyObject *d = dict_of(new);
    if (!d || PyDict_Update(d, old) < 0) {
        Py_DECREF(new);
        return NULL;
    }
#endif
    *fields = d;
    return new;
}

/* Set a field to a new reference, which is given up (also on failure). */
static int set_new(PyObject *d, PyObject *name, PyObject *value) {
    if (!value) return -1;
    int r = PyDict_SetItem(d, name, value);
    Py_DECREF(value);
    return r;
}

/* A tuple with one more item at the end (`t + (item,)`). */
static PyObject *appended(PyObject *t, PyObject *item) {
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    PyObject *out = PyTuple_New(n + 1);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(t, i);
        Py_INCREF(x);
        PyTuple_SET_ITEM(out, i, x);
    }
    Py_INCREF(item);
    PyTuple_SET_ITEM(out, n, item);
    return out;
}

/* A tuple with item i replaced by a new reference `x`, which is given up. */
static PyObject *replaced(PyObject *t, Py_ssize_t i, PyObject *x) {
    if (!x) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    PyObject *out = PyTuple_New(n);
    if (!out) {
        Py_DECREF(x);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *y = k == i ? x : PyTuple_GET_ITEM(t, k);
        if (k != i) Py_INCREF(y);
        PyTuple_SET_ITEM(out, k, y);
    }
    return out;
}

/* What _tile_played needs, checked before anything is built: the hands, the trick, no seat
 * sitting out (nello's next seat is Python's), the number of players. */
static int tile_played_ok(PyObject *rules, PyObject *hd, long seat, long *players) {
    PyObject *hands = field(hd, s_hands), *trick = field(hd, s_trick),
             *out = field(hd, s_sitting_out);
    if (!hands || !PyTuple_CheckExact(hands) || seat >= PyTuple_GET_SIZE(hands)) return PASS;
    if (!PyLong_CheckExact(PyTuple_GET_ITEM(hands, seat))) return PASS; /* `&=` is Python's */
    if (!trick || !PyTuple_CheckExact(trick)) return PASS;
    if (!out || !PyTuple_CheckExact(out) || PyTuple_GET_SIZE(out) != 0) return PASS;
    return small_int(slot(rules, o_players), 1, MAXP + 1, players);
}

/* decider._tile_played: the hand after seat plays tile (checked by tile_played_ok). */
static PyObject *build_tile_played(PyObject *hd, long players, long seat, long tile) {
    PyObject *fields;
    PyObject *new = copy_of(HandStateType, hd, &fields);
    if (!new) return NULL;
    PyObject *hands = field(hd, s_hands), *trick = field(hd, s_trick);
    Py_ssize_t played = PyTuple_GET_SIZE(trick) + 1;
    /* Every new value made before any is set, so that a failure leaks none of them. */
    PyObject *turn = played == players ? Py_NewRef(Py_None)
                                       : PyLong_FromLong(seat + 1 < players ? seat + 1 : 0);
    PyObject *now_held =
        replaced(hands, seat, PyNumber_InPlaceAnd(PyTuple_GET_ITEM(hands, seat), without[tile]));
    PyObject *now_trick = appended(trick, pairs[seat][tile]);
    if (!turn || !now_held || !now_trick) {
        Py_XDECREF(turn);
        Py_XDECREF(now_held);
        Py_XDECREF(now_trick);
        Py_DECREF(new);
        return NULL;
    }
    if (set_new(fields, s_hands, now_held) < 0 | set_new(fields, s_trick, now_trick) < 0 |
        set_new(fields, s_turn, turn) < 0) {
        Py_DECREF(new);
        return NULL;
    }
    return new;
}

/* What _trick_won needs, checked before anything is built. */
static int trick_won_ok(PyObject *rules, PyObject *hd, long seat, long *team) {
    PyObject *taken = field(hd, s_taken), *tricks = field(hd, s_tricks);
    if (!field(hd, s_trick) || !tricks || !PyTuple_CheckExact(tricks)) return PASS;
    if (!taken || !PyTuple_CheckExact(taken)) return PASS;
    if (tuple_int(slot(rules, o_team_of), seat, 0, PyTuple_GET_SIZE(taken), team)) return PASS;
    return PyLong_CheckExact(PyTuple_GET_ITEM(taken, *team)) ? OK : PASS; /* `+=` is Python's */
}

/* state.completed_trick(plays, winner, points): a Trick set through its slots. */
static PyObject *completed_trick(PyObject *plays_, PyObject *winner, PyObject *points) {
    PyObject *t = PyBaseObject_Type.tp_new(TrickType, empty_tuple, NULL);
    if (!t) return NULL;
    Py_INCREF(plays_);
    Py_INCREF(winner);
    Py_INCREF(points);
    *(PyObject **)((char *)t + o_trick_plays) = plays_;
    *(PyObject **)((char *)t + o_trick_winner) = winner;
    *(PyObject **)((char *)t + o_trick_points) = points;
    return t;
}

/* decider._trick_won: the hand after seat wins the trick for points (checked by trick_won_ok). */
static PyObject *build_trick_won(PyObject *hd, long team, PyObject *seat, PyObject *points) {
    PyObject *fields;
    PyObject *new = copy_of(HandStateType, hd, &fields);
    if (!new) return NULL;
    PyObject *taken = field(hd, s_taken), *tricks = field(hd, s_tricks), *trick = field(hd, s_trick);
    /* Every new value made before any is set, so that a failure leaks none of them. */
    PyObject *done = completed_trick(trick, seat, points);
    PyObject *more = done ? appended(tricks, done) : NULL;
    Py_XDECREF(done);
    PyObject *now_taken =
        replaced(taken, team, PyNumber_InPlaceAdd(PyTuple_GET_ITEM(taken, team), points));
    if (!more || !now_taken) {
        Py_XDECREF(more);
        Py_XDECREF(now_taken);
        Py_DECREF(new);
        return NULL;
    }
    if (set_new(fields, s_taken, now_taken) < 0 | set_new(fields, s_tricks, more) < 0 ||
        PyDict_SetItem(fields, s_trick, empty_tuple) < 0 || PyDict_SetItem(fields, s_turn, seat) < 0) {
        Py_DECREF(new);
        return NULL;
    }
    return new;
}

/* decider._with_hand: the game state with another hand; `hand` is given up. */
static PyObject *with_hand(PyObject *sd, PyObject *hand) {
    if (!hand) return NULL;
    PyObject *fields;
    PyObject *new = copy_of(GameStateType, sd, &fields);
    if (!new || PyDict_SetItem(fields, s_hand, hand) < 0) {
        Py_XDECREF(new);
        Py_DECREF(hand);
        return NULL;
    }
    Py_DECREF(hand);
    return new;
}

/* ---------------------------------------------------------------- decide */

static PyObject *fallback_kw(PyObject *func, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    if (PyErr_Occurred()) return NULL;
    if (!func) {
        PyErr_SetString(PyExc_RuntimeError, "boneyard.engine._decider_c: init() was not called");
        return NULL;
    }
    return PyObject_Vectorcall(func, args, nargs, kwnames);
}

static PyObject *fallback(PyObject *func, PyObject *const *args, Py_ssize_t nargs) {
    return fallback_kw(func, args, nargs, NULL);
}

/* [a] or [a, b] (new references to the items). */
static PyObject *list_of(PyObject *a, PyObject *b) {
    PyObject *list = PyList_New(b ? 2 : 1);
    if (!list) return NULL;
    Py_INCREF(a);
    PyList_SET_ITEM(list, 0, a);
    if (b) {
        Py_INCREF(b);
        PyList_SET_ITEM(list, 1, b);
    }
    return list;
}

/* The end of a trick, as decider._trick_ends makes it: the play and the TrickWon, with the states
 * after each left in `_prepared` for evolve; then, when the hand may end with this trick,
 * decider._hand_may_end (scoring's word, in Python). NULL without an exception: not handled
 * here (nothing was built, nothing changed). */
static PyObject *trick_ends_here(PyObject *state, PyObject *sd, PyObject *rules, PyObject *hand,
                                 PyObject *hd, long seat, long tile, int moon, int may_end) {
    PyObject *table = field(hd, s_table);
    PyObject *trick = field(hd, s_trick);
    long players;
    if (tile_played_ok(rules, hd, seat, &players)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(trick);
    long seats[MAXP + 1], tiles_[MAXP + 1];
    if (n + 1 > MAXP) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyTuple_GET_ITEM(trick, i);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) return NULL;
        if (small_int(PyTuple_GET_ITEM(pair, 0), 0, MAXP, &seats[i]) ||
            small_int(PyTuple_GET_ITEM(pair, 1), 0, TILES, &tiles_[i]))
            return NULL;
    }
    seats[n] = seat;
    tiles_[n] = tile;
    n++;
    long winner = seats[0], points = 1;
    for (Py_ssize_t i = 0; i < n; i++) points += count[tiles_[i]];
    if (table == Py_None) { /* sevens (checked by the caller): the nearest 7, the first on a tie */
        int best = distance[tiles_[0]];
        for (Py_ssize_t i = 1; i < n; i++)
            if (distance[tiles_[i]] < best) best = distance[tiles_[i]], winner = seats[i];
    } else { /* the highest power for the led suit */
        long led, best, p;
        PyObject *power;
        if (tuple_int(slot(table, o_lead_suit), tiles_[0], 0, 8, &led)) return NULL;
        power = slot(table, o_power);
        if (!power || !PyTuple_CheckExact(power) || led >= PyTuple_GET_SIZE(power)) return NULL;
        power = PyTuple_GET_ITEM(power, led);
        if (tuple_int(power, tiles_[0], LONG_MIN, LONG_MAX, &best)) return NULL;
        for (Py_ssize_t i = 1; i < n; i++) {
            if (tuple_int(power, tiles_[i], LONG_MIN, LONG_MAX, &p)) return NULL;
            if (p > best) best = p, winner = seats[i];
        }
    }
    if (moon) points = 1;
    long team;
    if (points >= trick_won_len || trick_won_ok(rules, hd, winner, &team)) return NULL;
    /* Everything is checked: from here on only an error (no memory) stops it. */
    PyObject *played = tile_played[seat][tile], *won = trick_won[winner][points];
    PyObject *result = NULL, *after = NULL, *played_state = NULL, *after_state = NULL;
    PyObject *winner_obj = PyLong_FromLong(winner), *points_obj = PyLong_FromLong(points);
    PyObject *full = winner_obj && points_obj ? build_tile_played(hd, players, seat, tile) : NULL;
    PyObject *full_fields = full ? dict_of(full) : NULL;
    if (full_fields) after = build_trick_won(full_fields, team, winner_obj, points_obj);
    if (after) {
        Py_INCREF(full);
        played_state = with_hand(sd, full);
    }
    PyObject *played_fields = played_state ? dict_of(played_state) : NULL;
    if (played_fields) {
        Py_INCREF(after);
        after_state = with_hand(played_fields, after);
    }
    if (after_state) {
        PyObject *prepared = PyTuple_Pack(5, state, played, played_state, won, after_state);
        if (prepared && PyDict_SetItem(decider_globals, s_prepared, prepared) == 0) {
            if (may_end)
                result = PyObject_CallFunctionObjArgs(hand_may_end, state, rules, hand, after,
                                                      winner_obj, played, won, NULL);
            else
                result = list_of(played, won);
        }
        Py_XDECREF(prepared);
    }
    Py_XDECREF(winner_obj);
    Py_XDECREF(points_obj);
    Py_XDECREF(full);
    Py_XDECREF(after);
    Py_XDECREF(played_state);
    Py_XDECREF(after_state);
    if (!result && !PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "trick end: no result");
    return result;
}

static PyObject *c_decide(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
    /* Called by keyword, or wrongly: Python's function answers (or says what is wrong). */
    if (!ready || nargs != 2 || kwnames) return fallback_kw(pure_decide, args, nargs, kwnames);
    PyObject *state = args[0], *command = args[1];
    if (Py_TYPE(command) != PlayTileType || Py_TYPE(state) != GameStateType)
        return fallback(pure_decide, args, nargs);
    PyObject *sd = dict_of(state);
    if (!sd) return NULL;
    PyObject *hand = field(sd, s_hand), *rules = field(sd, s_rules);
    PyObject *seat_obj = slot(command, o_cmd_seat), *tile_obj = slot(command, o_cmd_tile);
    long seat, tile, turn, players, hand_size;
    if (field(sd, s_phase) != PHASE_PLAY || !hand || Py_TYPE(hand) != HandStateType || !rules ||
        Py_TYPE(rules) != RulesetType || small_int(seat_obj, 0, MAXP, &seat) ||
        small_int(tile_obj, 0, TILES, &tile))
        return fallback(pure_decide, args, nargs);
    PyObject *hd = dict_of(hand);
    if (!hd) return NULL;
    uint32_t legal;
    if (small_int(field(hd, s_turn), 0, MAXP, &turn) || turn != seat ||
        legal_mask(rules, hd, seat, &legal) || !((legal >> tile) & 1))
        return fallback(pure_decide, args, nargs); /* refusals are Python's to word */
    PyObject *trick = field(hd, s_trick), *out = field(hd, s_sitting_out);
    if (!trick || !PyTuple_CheckExact(trick) || !out || !PyTuple_CheckExact(out) || small_int(slot(rules, o_players), 1, MAXP + 1, &players))
        return fallback(pure_decide, args, nargs);
    if (PyTuple_GET_SIZE(trick) + 1 < players - PyTuple_GET_SIZE(out))
        return list_of(tile_played[seat][tile], NULL);
    /* The trick ends: here unless a seat sits out (nello), or the contract or the table is not
     * what this code knows (sevens comes with a table of None); then Python's _trick_ends. The
     * hand may end with it unless (as _trick_ends tells) it is not the last trick, the hand is
     * played out and it is no nello: then scoring has its word. */
    int moon = flag(slot(rules, o_is_moon)), decided = flag(slot(rules, o_end_decided));
    PyObject *tricks = field(hd, s_tricks), *contract = field(hd, s_contract),
             *table = field(hd, s_table);
    PyObject *kind = contract && Py_TYPE(contract) == ContractType ? slot(contract, o_kind) : NULL;
    if (moon != PASS && decided != PASS && tricks && PyTuple_CheckExact(tricks) && kind && table &&
        PyTuple_GET_SIZE(out) == 0 &&
        (table != Py_None ? Py_TYPE(table) == SuitTableType : kind == KIND_SEVENS) &&
        !small_int(slot(rules, o_hand_size), 0, LONG_MAX, &hand_size)) {
        int may_end = !(PyTuple_GET_SIZE(tricks) + 1 < hand_size && (moon || !decided) &&
                        kind != KIND_NELLO);
        PyObject *events = trick_ends_here(state, sd, rules, hand, hd, seat, tile, moon, may_end);
        if (events || PyErr_Occurred()) return events;
    }
    if (PyErr_Occurred()) return NULL; /* a field's look-up raised */
    return PyObject_CallFunctionObjArgs(trick_ends, state, rules, hand, seat_obj, tile_obj, NULL);
}

/* ---------------------------------------------------------------- evolve */

static PyObject *c_evolve(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
    /* Called by keyword, or wrongly: Python's function answers (or says what is wrong). */
    if (!ready || nargs != 2 || kwnames) return fallback_kw(pure_evolve, args, nargs, kwnames);
    PyObject *state = args[0], *event = args[1];
    PyTypeObject *kind = Py_TYPE(event);
    if (kind != TilePlayedType && kind != TrickWonType) return fallback(pure_evolve, args, nargs);
    /* The states decide made for exactly these events of exactly this state (decider._prepared,
     * which Python's _trick_ends sets too). */
    PyObject *prepared = PyDict_GetItemWithError(decider_globals, s_prepared);
    if (prepared && PyTuple_CheckExact(prepared) && PyTuple_GET_SIZE(prepared) == 5) {
        if (PyTuple_GET_ITEM(prepared, 0) == state && PyTuple_GET_ITEM(prepared, 1) == event)
            return Py_NewRef(PyTuple_GET_ITEM(prepared, 2));
        if (PyTuple_GET_ITEM(prepared, 2) == state && PyTuple_GET_ITEM(prepared, 3) == event)
            return Py_NewRef(PyTuple_GET_ITEM(prepared, 4));
    }
    if (Py_TYPE(state) != GameStateType) return fallback(pure_evolve, args, nargs);
    PyObject *sd = dict_of(state);
    if (!sd) return NULL;
    PyObject *hand = field(sd, s_hand), *rules = field(sd, s_rules);
    if (!hand || Py_TYPE(hand) != HandStateType || !rules || Py_TYPE(rules) != RulesetType)
        return fallback(pure_evolve, args, nargs);
    PyObject *hd = dict_of(hand);
    if (!hd) return NULL;
    long seat, tile, players, team;
    if (kind == TilePlayedType) {
        if (small_int(slot(event, o_tp_seat), 0, MAXP, &seat) ||
            small_int(slot(event, o_tp_tile), 0, TILES, &tile) ||
            tile_played_ok(rules, hd, seat, &players))
            return fallback(pure_evolve, args, nargs);
        return with_hand(sd, build_tile_played(hd, players, seat, tile));
    }
    PyObject *seat_obj = slot(event, o_tw_seat), *points = slot(event, o_tw_points);
    if (small_int(seat_obj, 0, MAXP, &seat) || !points || !PyLong_CheckExact(points) ||
        trick_won_ok(rules, hd, seat, &team))
        return fallback(pure_evolve, args, nargs);
    return with_hand(sd, build_trick_won(hd, team, seat_obj, points));
}

/* ---------------------------------------------------------------- legal actions */

static PyObject *c_legal_actions(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
    /* Called by keyword, or wrongly: Python's function answers (or says what is wrong). */
    if (!ready || nargs != 2 || kwnames) return fallback_kw(pure_legal_actions, args, nargs, kwnames);
    PyObject *state = args[0], *seat_obj = args[1];
    if (Py_TYPE(state) != GameStateType || !PyLong_CheckExact(seat_obj))
        return fallback(pure_legal_actions, args, nargs);
    PyObject *sd = dict_of(state);
    if (!sd) return NULL;
    PyObject *hand = field(sd, s_hand);
    if (hand == Py_None) return PyList_New(0);
    if (!hand || Py_TYPE(hand) != HandStateType) return fallback(pure_legal_actions, args, nargs);
    PyObject *hd = dict_of(hand);
    if (!hd) return NULL;
    PyObject *turn_obj = field(hd, s_turn), *rules = field(sd, s_rules);
    if (turn_obj == Py_None) return PyList_New(0); /* None != seat: nobody's turn */
    long seat, turn;
    if (!turn_obj || !PyLong_CheckExact(turn_obj) || small_int(seat_obj, 0, MAXP, &seat))
        return fallback(pure_legal_actions, args, nargs);
    int cmp = PyObject_RichCompareBool(turn_obj, seat_obj, Py_EQ);
    if (cmp < 0) return NULL;
    if (!cmp) return PyList_New(0);
    uint32_t legal;
    if (field(sd, s_phase) != PHASE_PLAY || !rules || Py_TYPE(rules) != RulesetType ||
        small_int(turn_obj, 0, MAXP, &turn) || legal_mask(rules, hd, seat, &legal))
        return fallback(pure_legal_actions, args, nargs);
    PyObject *list = PyList_New(__builtin_popcount(legal));
    if (!list) return NULL;
    Py_ssize_t i = 0;
    for (; legal; legal &= legal - 1) {
        PyObject *p = plays[seat][__builtin_ctz(legal)];
        Py_INCREF(p);
        PyList_SET_ITEM(list, i++, p);
    }
    return list;
}

/* ---------------------------------------------------------------- init */

static int offset_of(PyTypeObject *cls, const char *name, Py_ssize_t *out) {
    PyObject *d = PyObject_GetAttrString((PyObject *)cls, name);
    if (!d) return -1;
    if (!Py_IS_TYPE(d, &PyMemberDescr_Type) ||
        ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", cls->tp_name, name);
        Py_DECREF(d);
        return -1;
    }
    *out = ((PyMemberDescrObject *)d)->d_member->offset;
    Py_DECREF(d);
    return 0;
}

/* Borrowed items of a tuple of tuples (rows x columns at least), into `out`. */
static int unpack2(PyObject *t, int rows, int cols, PyObject **out, int stride) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < rows) goto bad;
    for (int r = 0; r < rows; r++) {
        PyObject *row = PyTuple_GET_ITEM(t, r);
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) < cols) goto bad;
        for (int c = 0; c < cols; c++) out[r * stride + c] = PyTuple_GET_ITEM(row, c);
    }
    return 0;
bad:
    PyErr_SetString(PyExc_TypeError, "a table of the decider has not the expected shape");
    return -1;
}

static int ints(PyObject *t, int n, int *out) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != n) {
        PyErr_SetString(PyExc_TypeError, "expected a tuple of 28 ints");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        long v = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
        if (v == -1 && PyErr_Occurred()) return -1;
        out[i] = (int)v;
    }
    return 0;
}

static PyObject *c_init(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"namespace", "GameState", "HandState", "PlayTile", "TilePlayed",
                            "TrickWon", "Contract", "SuitTable", "Ruleset", "Trick", "play_phase",
                            "sevens", "nello", "decide", "evolve", "legal_actions", "trick_ends", "hand_may_end",
                            "plays", "tile_played", "trick_won", "pairs", "without", "count",
                            "distance", NULL};
    PyObject *ns, *gs, *hs, *pt, *tp, *tw, *ct, *st, *rs, *tr, *phase, *sevens, *nello, *dec, *evo,
        *leg, *te, *hme, *pl, *tpl, *twn, *pr, *wo, *cnt, *dist;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "O!O!O!O!O!O!O!O!O!O!OOOOOOOOO!O!O!O!O!O!O!:init", names, &PyDict_Type,
            &ns, &PyType_Type, &gs, &PyType_Type, &hs, &PyType_Type, &pt, &PyType_Type, &tp,
            &PyType_Type, &tw, &PyType_Type, &ct, &PyType_Type, &st, &PyType_Type, &rs,
            &PyType_Type, &tr, &phase, &sevens, &nello, &dec, &evo, &leg, &te, &hme, &PyTuple_Type, &pl,
            &PyTuple_Type, &tpl, &PyTuple_Type, &twn, &PyTuple_Type, &pr, &PyTuple_Type, &wo,
            &PyTuple_Type, &cnt, &PyTuple_Type, &dist))
        return NULL;
    if (ready) {
        PyErr_SetString(PyExc_RuntimeError, "the decider's C core is initialised once");
        return NULL;
    }
    GameStateType = (PyTypeObject *)gs, HandStateType = (PyTypeObject *)hs;
    PlayTileType = (PyTypeObject *)pt, TilePlayedType = (PyTypeObject *)tp;
    TrickWonType = (PyTypeObject *)tw, ContractType = (PyTypeObject *)ct;
    SuitTableType = (PyTypeObject *)st, RulesetType = (PyTypeObject *)rs;
    TrickType = (PyTypeObject *)tr;
    if (offset_of(PlayTileType, "seat", &o_cmd_seat) || offset_of(PlayTileType, "tile", &o_cmd_tile) ||
        offset_of(TilePlayedType, "seat", &o_tp_seat) || offset_of(TilePlayedType, "tile", &o_tp_tile) ||
        offset_of(TrickWonType, "seat", &o_tw_seat) ||
        offset_of(TrickWonType, "points", &o_tw_points) ||
        offset_of(ContractType, "kind", &o_kind) || offset_of(SuitTableType, "trumps", &o_trumps) ||
        offset_of(SuitTableType, "lead_suit", &o_lead_suit) ||
        offset_of(SuitTableType, "members", &o_members) ||
        offset_of(SuitTableType, "power", &o_power) ||
        offset_of(TrickType, "plays", &o_trick_plays) ||
        offset_of(TrickType, "winner", &o_trick_winner) ||
        offset_of(TrickType, "points", &o_trick_points) ||
        offset_of(RulesetType, "players", &o_players) ||
        offset_of(RulesetType, "may_trump_when_able_to_follow", &o_may_trump) ||
        offset_of(RulesetType, "bidder_leads_trump", &o_leads_trump) ||
        offset_of(RulesetType, "is_moon", &o_is_moon) ||
        offset_of(RulesetType, "end_hand_when_decided", &o_end_decided) ||
        offset_of(RulesetType, "hand_size", &o_hand_size) ||
        offset_of(RulesetType, "team_of", &o_team_of))
        return NULL;
    if (unpack2(pl, MAXP, TILES, &plays[0][0], TILES) ||
        unpack2(tpl, MAXP, TILES, &tile_played[0][0], TILES) ||
        unpack2(pr, MAXP, TILES, &pairs[0][0], TILES) || ints(cnt, TILES, count) ||
        ints(dist, TILES, distance))
        return NULL;
    if (PyTuple_GET_SIZE(wo) != TILES) {
        PyErr_SetString(PyExc_TypeError, "without: expected 28 masks");
        return NULL;
    }
    for (int t = 0; t < TILES; t++) without[t] = PyTuple_GET_ITEM(wo, t);
    if (PyTuple_GET_SIZE(twn) < MAXP || !PyTuple_Check(PyTuple_GET_ITEM(twn, 0))) {
        PyErr_SetString(PyExc_TypeError, "trick_won: expected a row a seat");
        return NULL;
    }
    trick_won_len = (int)PyTuple_GET_SIZE(PyTuple_GET_ITEM(twn, 0));
    if (trick_won_len > MOST_POINTS) trick_won_len = MOST_POINTS;
    if (unpack2(twn, MAXP, trick_won_len, &trick_won[0][0], MOST_POINTS)) return NULL;
    /* Keep every object given (the tables' items are borrowed from them). */
    tables = Py_BuildValue("(OOOOOOOOOOOOOOOOOOOOOOOOO)", ns, gs, hs, pt, tp, tw, ct, st, rs, tr,
                           phase, sevens, nello, dec, evo, leg, te, hme, pl, tpl, twn, pr, wo, cnt,
                           dist);
    if (!tables) return NULL;
    decider_globals = ns, PHASE_PLAY = phase, KIND_SEVENS = sevens, KIND_NELLO = nello;
    pure_decide = dec, pure_evolve = evo, pure_legal_actions = leg, trick_ends = te;
    hand_may_end = hme;
    ready = 1;
    /* Whether decider.py should make this core its decide/evolve/legal_actions: unless the
     * environment says BONEYARD_ENGINE_CORE=python. Read here, at import, so that the engine's
     * Python stays free of the environment (tests/engine/test_purity.py). */
    const char *core = getenv("BONEYARD_ENGINE_CORE");
    return PyBool_FromLong(!(core && strcmp(core, "python") == 0));
}

static PyMethodDef methods[] = {
    {"init", (PyCFunction)(void (*)(void))c_init, METH_VARARGS | METH_KEYWORDS,
     "init(namespace, GameState, ...) -> whether to use this core (decider.py calls it once)"},
    {"decide", (PyCFunction)(void (*)(void))c_decide, METH_FASTCALL | METH_KEYWORDS,
     "decide(state, command) -> events (decider.decide, its play path in C)"},
    {"evolve", (PyCFunction)(void (*)(void))c_evolve, METH_FASTCALL | METH_KEYWORDS,
     "evolve(state, event) -> state (decider.evolve, TilePlayed and TrickWon in C)"},
    {"legal_actions", (PyCFunction)(void (*)(void))c_legal_actions, METH_FASTCALL | METH_KEYWORDS,
     "legal_actions(state, seat) -> commands (decider.legal_actions, the plays in C)"},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "boneyard.engine._decider_c",
    "The decider's play path in C (boneyard.engine.decider is the API).", -1, methods,
};

PyMODINIT_FUNC PyInit__decider_c(void) {
    empty_tuple = PyTuple_New(0);
    if (!empty_tuple) return NULL;
    struct {
        PyObject **at;
        const char *name;
    } interned[] = {
        {&s_phase, "phase"},   {&s_hand, "hand"},       {&s_rules, "rules"},
        {&s_turn, "turn"},     {&s_hands, "hands"},     {&s_contract, "contract"},
        {&s_table, "table"},   {&s_trick, "trick"},     {&s_tricks, "tricks"},
        {&s_bidder, "bidder"}, {&s_sitting_out, "sitting_out"}, {&s_taken, "taken"},
        {&s_prepared, "_prepared"},
    };
    for (size_t i = 0; i < sizeof interned / sizeof interned[0]; i++) {
        *interned[i].at = PyUnicode_InternFromString(interned[i].name);
        if (!*interned[i].at) return NULL;
    }
    return PyModule_Create(&module);
}
