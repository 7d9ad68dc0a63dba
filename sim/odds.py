"""Exact odds and sampled twins for dice tests and gambles, plus their tables.

Dice tests
----------
A die is a row of three int arrays over its 6 faces: ``success`` (0/1),
``injury`` (0/1/2) and ``heal`` (0/1). The bag ``bag[n_bag]`` lists die indices;
``always_die`` (Yellow) is rolled in every test and never in the bag. Defaults:
the dice, bag and always die of the default content pack (:func:`default_dice`).

A test here draws every allowed die: ``k = min(dice_allowed, n_bag)`` dice are
drawn blind, one at a time without replacement, then all drawn dice and the
always die are rolled. Pass iff successes >= needed. Net injuries = sum of the
injury values - number of heal faces (negative = net heal), counted whether the
test passes or fails.

Reroll rule (``reroll = "none"`` or ``"on_fail"``, codes 0 / 1): with
``on_fail``, if the test has failed after the roll, reroll exactly one die that
does not show a success, choosing the one with the most success faces (highest
chance of rolling a success); ties go to the die currently showing the most
injuries, then to the lowest position in drawn order, the always die (Yellow)
being last. Only the final faces count: the rerolled die's old face (with any
injury or heal on it) is replaced. If the test passed there is no reroll; if
every die shows a success there is nothing to reroll. The reroll is made even
when one more success could not pass the test.

Canonical dice protocol (the rules engine follows it exactly), on stream
``DICE``: ``bag`` is copied, ``n_left = n_bag``; to draw a die
``j = next_below(state, DICE, n_left)``, take ``bag[j]``, swap ``bag[j]`` with
``bag[n_left - 1]`` and decrement ``n_left``. After drawing, roll the drawn
dice in draw order and then the always die, each face = ``next_below(state,
DICE, 6)``. A reroll draws one more ``next_below(state, DICE, 6)`` for the
chosen die. See :func:`play_dice_test`.

Gambles
-------
See :mod:`sim.poker` for the ranking, the gamble protocol and the exchange
policies. Stand-pat odds are exact: the player's and the House's hands are two
disjoint uniformly random 5-card hands, so P(win) = P(loss) = (1 - P(tie)) / 2,
and P(tie) = (ordered pairs of disjoint hands of equal value) / (C(44,5) C(39,5)),
counted by enumerating all hands. Exchange policies are sampled (standard
error sqrt(p (1 - p) / n)).

Samplers play sample ``i`` on game index ``game0 + i`` of ``seed``, so a run is
the concatenation of smaller runs and never depends on the batch size.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from sim import poker
from sim.jit import compile_twins, jit
from sim.rng import DICE, STATE_SIZE, check_seed, init_state_nb, next_below, next_below_nb

# --- default dice: the default content pack's ----------------------------------------
_FACE = {"S": (1, 0, 0), "I": (0, 1, 0), "II": (0, 2, 0), "H": (0, 0, 1), "-": (0, 0, 0)}


def dice_arrays(faces):
    """(success, injury, heal) int64 arrays ``[n_dice, 6]`` from face strings like ``'S I H - - -'``."""
    n = len(faces)
    out = np.zeros((3, n, 6), dtype=np.int64)
    for d, spec in enumerate(faces):
        tokens = spec.split()
        if len(tokens) != 6:
            raise ValueError(f"die {d} needs 6 faces, got {spec!r}")
        for f, t in enumerate(tokens):
            out[:, d, f] = _FACE[t]
    return out[0], out[1], out[2]


@functools.lru_cache(maxsize=1)
def _default_pack():
    from sim.content import load

    return load()


def default_dice() -> tuple:
    """``(success, injury, heal, bag, always_die)`` of the default content pack (int64 copies)."""
    c = _default_pack()
    arrays = (c.die_success, c.die_injury, c.die_heal, c.bag_dice)
    return (*(np.array(a, dtype=np.int64) for a in arrays), int(c.always_die))


def default_fate_deck() -> tuple:
    """``(rank, suit)`` of the default content pack's Fate deck (int64 copies)."""
    c = _default_pack()
    return np.array(c.fate_rank, dtype=np.int64), np.array(c.fate_suit, dtype=np.int64)


REROLL_CODES = {"none": 0, "on_fail": 1}
REROLL_RULE = (
    "reroll = on_fail: if the test failed, reroll one die not showing a success, the one with "
    "the best success chance (ties: most injuries shown, then earliest drawn, Yellow last); "
    "only final faces count. reroll = none: no reroll."
)


def _dice_defaults(success, injury, heal, bag, always_die):
    d_success, d_injury, d_heal, d_bag, d_always = default_dice()
    success = d_success if success is None else np.ascontiguousarray(success, dtype=np.int64)
    injury = d_injury if injury is None else np.ascontiguousarray(injury, dtype=np.int64)
    heal = d_heal if heal is None else np.ascontiguousarray(heal, dtype=np.int64)
    bag = d_bag if bag is None else np.ascontiguousarray(bag, dtype=np.int64)
    always_die = d_always if always_die is None else int(always_die)
    return success, injury, heal, bag, always_die


def _reroll_code(reroll) -> int:
    if isinstance(reroll, str):
        if reroll not in REROLL_CODES:
            raise ValueError(f"reroll must be one of {sorted(REROLL_CODES)}, got {reroll!r}")
        return REROLL_CODES[reroll]
    if reroll not in (0, 1):
        raise ValueError(f"reroll code must be 0 or 1, got {reroll!r}")
    return int(reroll)


def net_injury_offset(injury, heal, bag):
    """Index offset of the sampler's net-injury counts: ``counts[j]`` is net injuries ``j - offset``."""
    return (bag.shape[0] + 1) * heal.max()


def net_injury_size(injury, heal, bag):
    """Length of the sampler's net-injury count array (covers every possible net value)."""
    return (bag.shape[0] + 1) * (heal.max() + injury.max()) + 1


# --- compiled twins: one dice test ---------------------------------------------------
def choose_reroll(dice, faces, n, success, injury):
    """Position (0..n-1) of the die to reroll after a failed test, or -1 if every die shows a success.

    ``dice[p]`` / ``faces[p]`` are the die index and face of position p (drawn
    dice in draw order, then the always die). Rule: among dice not showing a
    success take the most success faces, then the most injuries shown, then the
    lowest position.
    """
    best = -1
    best_succ = -1
    best_inj = -1
    for p in range(n):
        d = dice[p]
        if success[d, faces[p]] > 0:
            continue
        n_succ = 0
        for f in range(6):
            n_succ += success[d, f]
        inj = injury[d, faces[p]]
        if n_succ > best_succ or (n_succ == best_succ and inj > best_inj):
            best = p
            best_succ = n_succ
            best_inj = inj
    return best


def play_dice_test(
    state, dice_allowed, successes_needed, reroll_code, success, injury, heal, bag, always_die
):
    """Play one dice test on stream ``state`` (canonical protocol); return (passed 0/1, net injuries)."""
    n_bag = bag.shape[0]
    k = dice_allowed
    if k > n_bag:
        k = n_bag
    if k < 0:
        k = 0
    left = bag.copy()
    n_left = n_bag
    dice = np.empty(k + 1, np.int64)
    faces = np.empty(k + 1, np.int64)
    for i in range(k):
        j = next_below(state, DICE, n_left)
        dice[i] = left[j]
        left[j] = left[n_left - 1]
        left[n_left - 1] = dice[i]
        n_left -= 1
    dice[k] = always_die
    for p in range(k + 1):
        faces[p] = next_below(state, DICE, 6)
    succ = 0
    for p in range(k + 1):
        succ += success[dice[p], faces[p]]
    if succ < successes_needed and reroll_code == 1:
        p = choose_reroll(dice, faces, k + 1, success, injury)
        if p >= 0:
            faces[p] = next_below(state, DICE, 6)
            succ += success[dice[p], faces[p]]
    net = 0
    for p in range(k + 1):
        net += injury[dice[p], faces[p]] - heal[dice[p], faces[p]]
    passed = 1 if succ >= successes_needed else 0
    return passed, net


_ns = dict(globals())
_ns["next_below"] = next_below_nb
_twins = compile_twins(_ns, ["choose_reroll", "play_dice_test"])
choose_reroll_nb = _twins["choose_reroll"]
play_dice_test_nb = _twins["play_dice_test"]


@jit
def sample_dice_tests(
    seed,
    n,
    dice_allowed,
    successes_needed,
    reroll_code,
    success,
    injury,
    heal,
    bag,
    always_die,
    game0=0,
):
    """Play ``n`` dice tests (sample i on game ``game0 + i``); return (n_pass, net-injury counts).

    ``counts[j]`` counts tests with net injuries ``j - net_injury_offset(...)``.
    """
    offset = (bag.shape[0] + 1) * heal.max()
    size = (bag.shape[0] + 1) * (heal.max() + injury.max()) + 1
    counts = np.zeros(size, np.int64)
    state = np.zeros(STATE_SIZE, np.int64)
    n_pass = 0
    for i in range(n):
        init_state_nb(state, seed, game0 + i)
        passed, net = play_dice_test_nb(
            state,
            dice_allowed,
            successes_needed,
            reroll_code,
            success,
            injury,
            heal,
            bag,
            always_die,
        )
        n_pass += passed
        counts[net + offset] += 1
    return n_pass, counts


# --- exact dice odds -----------------------------------------------------------------
@dataclass(frozen=True)
class DiceOdds:
    """Exact odds of one dice test: P(pass) and the net-injury distribution (floats and Fractions)."""

    p_pass: float
    net_injuries: dict[int, float]
    p_pass_exact: Fraction = field(repr=False, default=Fraction(0))
    net_injuries_exact: dict[int, Fraction] = field(repr=False, default_factory=dict)

    @property
    def mean_net_injuries(self) -> float:
        return sum(v * p for v, p in self.net_injuries.items())

    @property
    def p_injured(self) -> float:
        """P(net injuries >= 1)."""
        return sum(p for v, p in self.net_injuries.items() if v >= 1)


@functools.lru_cache(maxsize=4096)
def _dice_exact(k, needed, reroll_code, success, injury, heal, bag, always_die):
    """Integer-weight enumeration; arguments are tuples. Returns (pass_w, {net: w}, total_w)."""
    n_dice = len(success)
    # distinct faces per die: (success, injury, heal, multiplicity)
    kinds = []
    for d in range(n_dice):
        c: dict[tuple[int, int, int], int] = {}
        for f in range(6):
            key = (success[d][f], injury[d][f], heal[d][f])
            c[key] = c.get(key, 0) + 1
        kinds.append(tuple((s, i, h, m) for (s, i, h), m in sorted(c.items())))
    n_succ = [sum(success[d]) for d in range(n_dice)]
    # draw order matters only through the reroll tie-break; every ordered draw is equally likely
    orders = itertools.permutations(bag, k) if reroll_code else itertools.combinations(bag, k)
    pass_w = 0
    total = 0
    net_w: dict[int, int] = {}
    for order in orders:
        dice = (*order, always_die)
        for combo in itertools.product(*(kinds[d] for d in dice)):
            w = 1
            succ = 0
            net = 0
            for s, i, h, m in combo:
                w *= m
                succ += s
                net += i - h
            outcomes = [(succ, net, 6 * w)]
            if succ < needed and reroll_code:
                cand = [p for p in range(len(dice)) if combo[p][0] == 0]
                if cand:
                    p = cand[0]
                    for q in cand[1:]:
                        if (n_succ[dice[q]], combo[q][1]) > (n_succ[dice[p]], combo[p][1]):
                            p = q
                    old = combo[p]
                    base_succ = succ - old[0]
                    base_net = net - (old[1] - old[2])
                    outcomes = [
                        (base_succ + s, base_net + i - h, w * m) for s, i, h, m in kinds[dice[p]]
                    ]
            for s_, n_, w_ in outcomes:
                total += w_
                if s_ >= needed:
                    pass_w += w_
                net_w[n_] = net_w.get(n_, 0) + w_
    return pass_w, net_w, total


def dice_test_odds(
    dice_allowed: int,
    successes_needed: int,
    reroll: str | int = "none",
    success=None,
    injury=None,
    heal=None,
    bag=None,
    always_die=None,
) -> DiceOdds:
    """Exact odds of a dice test drawing every allowed die (full enumeration, no sampling).

    Enumerates every ordered draw (equally likely), every face of every die and
    the rerolled face; see the module doc for the reroll rule.
    """
    success, injury, heal, bag, always_die = _dice_defaults(success, injury, heal, bag, always_die)
    code = _reroll_code(reroll)
    k = max(0, min(int(dice_allowed), bag.shape[0]))

    def tup(a):
        return tuple(tuple(int(x) for x in row) for row in a)

    pass_w, net_w, total = _dice_exact(
        k,
        int(successes_needed),
        code,
        tup(success),
        tup(injury),
        tup(heal),
        tuple(int(x) for x in bag),
        always_die,
    )
    p = Fraction(pass_w, total)
    dist = {v: Fraction(w, total) for v, w in sorted(net_w.items())}
    return DiceOdds(
        p_pass=float(p),
        net_injuries={v: float(q) for v, q in dist.items()},
        p_pass_exact=p,
        net_injuries_exact=dist,
    )


def dice_test_sampled(
    dice_allowed: int,
    successes_needed: int,
    reroll: str | int = "none",
    samples: int = 1_000_000,
    seed: int = 1,
    success=None,
    injury=None,
    heal=None,
    bag=None,
    always_die=None,
    game0: int = 0,
) -> tuple[int, dict[int, int]]:
    """Python front end of :func:`sample_dice_tests`: (n_pass, {net injuries: count})."""
    check_seed(seed, game0)
    success, injury, heal, bag, always_die = _dice_defaults(success, injury, heal, bag, always_die)
    n_pass, counts = sample_dice_tests(
        seed,
        samples,
        dice_allowed,
        successes_needed,
        _reroll_code(reroll),
        success,
        injury,
        heal,
        bag,
        always_die,
        game0,
    )
    off = int(net_injury_offset(injury, heal, bag))
    return int(n_pass), {j - off: int(c) for j, c in enumerate(counts) if c}


def dice_table(success=None, injury=None, heal=None, bag=None, always_die=None) -> list[dict]:
    """Records for dice_allowed 0..n_bag x needed 1, 2 x reroll none, on_fail (exact)."""
    success, injury, heal, bag, always_die = _dice_defaults(success, injury, heal, bag, always_die)
    rows = []
    for k in range(bag.shape[0] + 1):
        for need in (1, 2):
            for reroll in ("none", "on_fail"):
                o = dice_test_odds(k, need, reroll, success, injury, heal, bag, always_die)
                rows.append(
                    {
                        "dice_allowed": k,
                        "successes_needed": need,
                        "reroll": reroll,
                        "p_pass": o.p_pass,
                        "net_injuries": {str(v): p for v, p in o.net_injuries.items()},
                    }
                )
    return rows


def _fmt_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r):
        return "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True))

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def cli_dice(json_out: bool, content=None) -> str:
    """Text (or a JSON list) of the exact dice-test odds, for ``smersh-sim odds dice``.

    ``content``: a loaded content pack whose dice and bag to use (default: the default pack's).
    """
    if content is None:
        rows = dice_table()
    else:
        rows = dice_table(content.die_success, content.die_injury, content.die_heal, content.bag_dice,
                          content.always_die)
    if json_out:  # each row names the pack whose dice it counts
        c_hash = (content if content is not None else _default_pack()).hash
        return json.dumps([{**r, "content_hash": c_hash} for r in rows], indent=1)
    cells = {(r["dice_allowed"], r["successes_needed"], r["reroll"]): r for r in rows}
    ks = sorted({r["dice_allowed"] for r in rows})
    cols = [(1, "none"), (1, "on_fail"), (2, "none"), (2, "on_fail")]
    t1 = _fmt_table(
        ["dice allowed"] + [f"need {s}, reroll={r}" for s, r in cols],
        [[str(k)] + [f"{100 * cells[(k, s, r)]['p_pass']:.2f}%" for s, r in cols] for k in ks],
    )

    def mean(r):
        return sum(int(v) * p for v, p in r["net_injuries"].items())

    def p_inj(r):
        return sum(p for v, p in r["net_injuries"].items() if int(v) >= 1)

    t2 = _fmt_table(
        ["dice allowed"] + [f"need {s}, reroll={r}: mean / P(>=1)" for s, r in cols],
        [
            [str(k)]
            + [
                f"{mean(cells[(k, s, r)]):+.3f} / {100 * p_inj(cells[(k, s, r)]):.2f}%"
                for s, r in cols
            ]
            for k in ks
        ],
    )
    seen = {int(v) for r in rows for v in r["net_injuries"]}
    net_values = range(min(seen), max(seen) + 1)
    t3 = _fmt_table(
        ["dice allowed", "reroll"] + [f"net {v:+d}" for v in net_values],
        [
            [str(k), r]
            + [
                f"{100 * cells[(k, 1, r)]['net_injuries'].get(str(v), 0.0):.2f}%"
                for v in net_values
            ]
            for k in ks
            for r in ("none", "on_fail")
        ],
    )
    return "\n".join(
        [
            "Dice tests, exact: P(pass), drawing every allowed die from the bag plus the Yellow die.",
            REROLL_RULE,
            "",
            t1,
            "",
            "Net injuries (injuries - heals, applied pass or fail): mean / P(net >= 1)",
            "",
            t2,
            "",
            "Net-injury distribution (need 1; with reroll=none it does not depend on the need)",
            "",
            t3,
        ]
    )


# --- P(pass) tables of a pack's dice ------------------------------------------------------
@functools.lru_cache(maxsize=8)
def pass_table(content_hash: str, success: tuple, injury: tuple, heal: tuple, bag: tuple, always: int) -> np.ndarray:
    """Exact P(pass) [dice 0..5, needed 1..2 (index 0..1), reroll no/yes] for drawing every die

    (the heuristic's estimate, in both engines).
    """
    from sim._cache import stored_table

    def enumerate_all():
        arrs = [np.array(x, dtype=np.int64) for x in (success, injury, heal, bag)]
        out = np.zeros((6, 2, 2))
        for k in range(6):
            for needed in (1, 2):
                for r, mode in enumerate(("none", "on_fail")):
                    out[k, needed - 1, r] = dice_test_odds(k, needed, mode, *arrs, always).p_pass
        return out

    # kept on disk: the enumeration takes about 0.6 s of every process's first game
    return stored_table("pass_table", (success, injury, heal, bag, always), enumerate_all)


@functools.lru_cache(maxsize=8)
def content_pass_table(content) -> np.ndarray:
    """:func:`pass_table` for a content pack's dice (cached per pack object)."""
    return pass_table(*pass_table_args(content))


def pass_table_args(content) -> tuple:
    """:func:`pass_table`'s arguments for a content pack: its hash, then its dice as plain tuples."""

    def t(a):
        return tuple(tuple(int(x) for x in row) for row in a) if a.ndim == 2 else tuple(int(x) for x in a)

    return (content.hash, t(content.die_success), t(content.die_injury), t(content.die_heal), t(content.bag_dice),
            int(content.always_die))


# --- gambles: exact enumeration --------------------------------------------------------
def _deck_defaults(deck_rank, deck_suit):
    d_rank, d_suit = default_fate_deck()
    deck_rank = d_rank if deck_rank is None else np.ascontiguousarray(deck_rank, dtype=np.int64)
    deck_suit = d_suit if deck_suit is None else np.ascontiguousarray(deck_suit, dtype=np.int64)
    if deck_rank.shape != deck_suit.shape or deck_rank.shape[0] < 10:
        raise ValueError("deck_rank and deck_suit must be equal-length arrays of at least 10 cards")
    return deck_rank, deck_suit


@jit
def enumerate_hands(deck_rank, deck_suit):
    """Values and 64-bit card masks of every 5-card hand, in lexicographic order of card codes."""
    n = deck_rank.shape[0]
    total = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) // 120
    values = np.empty(total, np.int64)
    masks = np.empty(total, np.int64)
    h = 0
    for c0 in range(n - 4):
        for c1 in range(c0 + 1, n - 3):
            for c2 in range(c1 + 1, n - 2):
                for c3 in range(c2 + 1, n - 1):
                    for c4 in range(c3 + 1, n):
                        values[h] = poker.hand_value_cards_nb(
                            c0, c1, c2, c3, c4, deck_rank, deck_suit
                        )
                        masks[h] = (1 << c0) | (1 << c1) | (1 << c2) | (1 << c3) | (1 << c4)
                        h += 1
    return values, masks


@jit
def _equal_disjoint_pairs(values, masks):
    """Ordered pairs (a, b) of disjoint hands with equal value; inputs sorted by value."""
    total = 0
    n = values.shape[0]
    start = 0
    while start < n:
        end = start
        while end < n and values[end] == values[start]:
            end += 1
        for a in range(start, end):
            ma = masks[a]
            for b in range(a + 1, end):
                if ma & masks[b] == 0:
                    total += 2
        start = end
    return total


@functools.lru_cache(maxsize=8)
def _hand_stats(deck_rank_t: tuple, deck_suit_t: tuple):
    deck_rank = np.array(deck_rank_t, dtype=np.int64)
    deck_suit = np.array(deck_suit_t, dtype=np.int64)
    values, masks = enumerate_hands(deck_rank, deck_suit)
    cats = np.bincount(values >> 20, minlength=poker.N_CATEGORIES)
    order = np.argsort(values, kind="stable")
    tie_pairs = int(_equal_disjoint_pairs(values[order], masks[order]))
    return cats, tie_pairs


def hand_category_counts(deck_rank=None, deck_suit=None) -> np.ndarray:
    """Exact number of 5-card hands in each category 0..9 (index into CATEGORY_NAMES)."""
    deck_rank, deck_suit = _deck_defaults(deck_rank, deck_suit)
    cats, _ = _hand_stats(tuple(deck_rank.tolist()), tuple(deck_suit.tolist()))
    return cats.copy()


@dataclass(frozen=True)
class GambleOdds:
    """P(win) / P(tie) of a gamble policy against the House; exact or sampled with its stderr."""

    policy: str
    p_win: float
    p_tie: float
    exact: bool
    stderr: float | None = None  # of p_win
    stderr_tie: float | None = None
    p_win_exact: Fraction | None = None
    p_tie_exact: Fraction | None = None
    samples: int | None = None

    def record(self) -> dict:
        """A JSON-ready record: the exact fractions as ``"n/d"`` text (None when sampled), the sample
        count (None when exact)."""
        return {
            "policy": self.policy,
            "p_win": self.p_win,
            "p_tie": self.p_tie,
            "exact": self.exact,
            "stderr": self.stderr,
            "stderr_tie": self.stderr_tie,
            "p_win_exact": None if self.p_win_exact is None else str(self.p_win_exact),
            "p_tie_exact": None if self.p_tie_exact is None else str(self.p_tie_exact),
            "samples": self.samples,
        }


def stand_pat_odds(deck_rank=None, deck_suit=None) -> GambleOdds:
    """Exact P(win) and P(tie) of standing pat (Fractions in ``*_exact``), without sampling."""
    deck_rank, deck_suit = _deck_defaults(deck_rank, deck_suit)
    _, tie_pairs = _hand_stats(tuple(deck_rank.tolist()), tuple(deck_suit.tolist()))
    n = deck_rank.shape[0]
    p_tie = Fraction(tie_pairs, math.comb(n, 5) * math.comb(n - 5, 5))
    p_win = (1 - p_tie) / 2
    return GambleOdds(
        "stand_pat", float(p_win), float(p_tie), True, p_win_exact=p_win, p_tie_exact=p_tie
    )


# --- gambles: samplers -----------------------------------------------------------------
@jit
def sample_gambles(seed, n, allowance, deck_rank, deck_suit, game0=0):
    """Play ``n`` gambles with exchange allowance ``allowance`` (0 = stand pat); return (n_win, n_tie)."""
    state = np.zeros(STATE_SIZE, np.int64)
    n_win = 0
    n_tie = 0
    for i in range(n):
        init_state_nb(state, seed, game0 + i)
        player, house = poker.play_gamble_nb(state, allowance, deck_rank, deck_suit)
        if player > house:
            n_win += 1
        elif player == house:
            n_tie += 1
    return n_win, n_tie


@jit
def sample_stand_pat(seed, n, deck_rank, deck_suit, game0=0):
    """Stand-pat gambles: (n_win, n_tie)."""
    return sample_gambles(seed, n, 0, deck_rank, deck_suit, game0)


@jit
def sample_hand_categories(seed, n, deck_rank, deck_suit, game0=0):
    """Category counts[10] of the player's dealt hand (first 5 cards of a gamble deck)."""
    state = np.zeros(STATE_SIZE, np.int64)
    counts = np.zeros(10, np.int64)
    for i in range(n):
        init_state_nb(state, seed, game0 + i)
        counts[poker.deal_hand_value_nb(state, deck_rank, deck_suit) >> 20] += 1
    return counts


GAMBLE_CHUNK = 250_000  # gambles per compiled call (about a tenth of a second)


def gamble_policy_odds(
    policy: str,
    samples: int = 1_000_000,
    seed: int = 1,
    deck_rank=None,
    deck_suit=None,
    game0: int = 0,
) -> GambleOdds:
    """Sampled P(win) / P(tie) of a built-in policy (see ``sim.poker.POLICIES``)."""
    if policy not in poker.POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose from {sorted(poker.POLICIES)}")
    if samples <= 0:
        raise ValueError("samples must be positive")
    check_seed(seed, game0 + samples - 1)
    deck_rank, deck_suit = _deck_defaults(deck_rank, deck_suit)
    n_win = n_tie = 0
    # in chunks, so Ctrl-C stops a long run between two of them (compiled code cannot be
    # interrupted); gamble i is game0 + i's either way, so the counts are the same
    for start in range(0, samples, GAMBLE_CHUNK):
        w, t = sample_gambles(seed, min(GAMBLE_CHUNK, samples - start), poker.POLICIES[policy], deck_rank, deck_suit,
                              game0 + start)
        n_win += int(w)
        n_tie += int(t)
    pw = n_win / samples
    pt = n_tie / samples
    return GambleOdds(
        policy,
        pw,
        pt,
        False,
        stderr=math.sqrt(pw * (1 - pw) / samples),
        stderr_tie=math.sqrt(pt * (1 - pt) / samples),
        samples=samples,
    )


def gamble_table(
    samples: int = 1_000_000, seed: int = 1, deck_rank=None, deck_suit=None
) -> list[GambleOdds]:
    """Stand pat exact, the exchange policies sampled."""
    out = [stand_pat_odds(deck_rank, deck_suit)]
    for policy in poker.POLICIES:
        if policy != "stand_pat":
            out.append(gamble_policy_odds(policy, samples, seed, deck_rank, deck_suit))
    return out


def dealt_hands_table(deck_rank=None, deck_suit=None) -> list[dict]:
    """Records of the dealt 5-card hands by category, best first: exact count, probability, and the
    probability as an exact fraction (``"n/d"`` text, reduced)."""
    counts = hand_category_counts(deck_rank, deck_suit)
    total = int(counts.sum())
    return [{"category": poker.CATEGORY_NAMES[c], "count": int(counts[c]), "probability": int(counts[c]) / total,
             "probability_exact": str(Fraction(int(counts[c]), total))}
            for c in range(poker.N_CATEGORIES - 1, -1, -1)]


def cli_gamble(json_out: bool, samples: int = 1_000_000, seed: int = 1, content=None) -> str:
    """Text (or JSON) of the gamble odds per policy and the dealt hands, for ``smersh-sim odds gamble``.

    The JSON is an object: ``policies`` (one :meth:`GambleOdds.record` each, stand pat exact, the
    exchange policies sampled, each with the ``seed`` it was sampled with), ``dealt_hands``
    (:func:`dealt_hands_table`) and ``dealt_hands_total`` (the number of 5-card hands of the deck):
    everything the text prints. ``content``: a loaded content pack whose Fate deck to play with (default:
    the default pack's).
    """
    deck_rank = None if content is None else content.fate_rank
    deck_suit = None if content is None else content.fate_suit
    table = gamble_table(samples, seed, deck_rank, deck_suit)
    if json_out:
        hands = dealt_hands_table(deck_rank, deck_suit)
        return json.dumps({
            "policies": [{**g.record(), "seed": None if g.exact else seed} for g in table],
            "dealt_hands": hands,
            "dealt_hands_total": sum(h["count"] for h in hands),
            "content_hash": (content if content is not None else _default_pack()).hash,
        }, indent=1)

    def pct(p, se):
        return f"{100 * p:.3f}%" + ("" if se is None else f" ± {100 * se:.3f}%")

    t1 = _fmt_table(
        ["policy", "P(win)", "P(tie)", "method"],
        [
            [
                g.policy,
                pct(g.p_win, g.stderr),
                pct(g.p_tie, g.stderr_tie),
                "exact" if g.exact else f"sampled, n={g.samples:,}, seed={seed}",
            ]
            for g in table
        ],
    )
    sp = table[0]
    hands = dealt_hands_table(deck_rank, deck_suit)
    total = sum(h["count"] for h in hands)
    t2 = _fmt_table(
        ["category", "count", "probability"],
        [[h["category"], f"{h['count']:,}", f"{h['probability']:.6f}"] for h in hands]
        + [["total", f"{total:,}", "1.000000"]],
    )
    return "\n".join(
        [
            "Gambles against the House (a tie loses); ± is one standard error sqrt(p(1-p)/n).",
            "Policies: stand_pat keeps the hand; exchange_N exchanges up to N cards: keeps made hands",
            "(straight or better) whole, goes for 4-card flushes with a pair or less, else keeps the",
            "cards that form the hand (high card: the highest) and exchanges the lowest of the rest.",
            "",
            t1,
            "",
            f"Stand pat exactly: P(win) = {sp.p_win_exact} , P(tie) = {sp.p_tie_exact}",
            "",
            f"Dealt 5-card hands (exact counts over all C({_deck_defaults(deck_rank, deck_suit)[0].shape[0]},5) hands; "
            "rulebook order, best first):",
            "",
            t2,
        ]
    )


__all__ = [
    "DiceOdds",
    "GambleOdds",
    "REROLL_CODES",
    "REROLL_RULE",
    "choose_reroll",
    "choose_reroll_nb",
    "cli_dice",
    "cli_gamble",
    "content_pass_table",
    "dealt_hands_table",
    "dice_arrays",
    "dice_table",
    "dice_test_odds",
    "dice_test_sampled",
    "default_dice",
    "default_fate_deck",
    "enumerate_hands",
    "gamble_policy_odds",
    "gamble_table",
    "hand_category_counts",
    "net_injury_offset",
    "net_injury_size",
    "pass_table",
    "play_dice_test",
    "play_dice_test_nb",
    "sample_dice_tests",
    "sample_gambles",
    "sample_hand_categories",
    "sample_stand_pat",
    "stand_pat_odds",
]
