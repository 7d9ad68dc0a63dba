"""Decks and token supplies in the kernel: the canonical draw protocol of ``sim.rules.decks``.

A deck is a block of the state vector at ``base`` with capacity ``cap``:
``[count, top, n_discard, pile[cap], discard[cap]]``. Also the small shared
helpers of the kernel (player blocks, Dr. Lobo's track, token look-ups, the Top
Secret hand), so every other kernel module imports from here.
"""

from __future__ import annotations

from numba import config
from numba.core.extending import intrinsic

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel.layout import (
    D_COUNT,
    D_NDISC,
    D_PILE,
    D_TOP,
    K_N_STATUS,
    K_STATUS_DISCARD_DECK,
    L_AIRPORT,
    L_NEXT,
    L_PLAYERS,
    L_PSTRIDE,
    L_STATUS,
    L_TS,
    L_TSCAP,
    N_SKILLS,
    N_STATUS_EFFECTS,
    N_TS_EFFECTS,
    P_ADV,
    P_CHAR,
    P_N_TS,
    P_RESOLVE,
    P_RESOLVE_MAX,
    P_SKILLS,
    P_TS,
    P_UN,
    S_ADV_HELD,
    S_HELD_DICE,
    S_HELD_EFFECTS,
    S_HELD_TS,
    S_LOBO_START,
    S_N_NEXT,
    S_UN_SUPPLY,
    ST_TOP_SECRET_PLAYED,
)
from sim.rng import TOKENS, TOP_SECRET, next_below_nb

jit = njit(**KERNEL_OPTIONS)
# views into the state vector cannot be returned from a runtime-free function: inline them
inline_jit = njit(inline="always", **KERNEL_OPTIONS)


def _ctpop_typer(typingctx, x):
    """numba intrinsic: the int64 -> int64 signature of LLVM's ``ctpop`` and its code."""
    from llvmlite import ir
    from numba import types

    def codegen(context, builder, sig, args):
        """A call of ``llvm.ctpop.i64`` on the argument."""
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, args)

    return types.int64(types.int64), codegen


def popcount_plain(x):
    """Set bits of ``0 <= x < 2**63`` (plain Python: ``popcount`` where nothing is compiled)."""
    return bin(x).count("1")


if config.DISABLE_JIT:
    popcount = popcount_plain
else:
    _ctpop = intrinsic(_ctpop_typer)

    @inline_jit
    def popcount(x):
        """Set bits of ``0 <= x < 2**63`` (LLVM's ``ctpop``: one instruction where the CPU has one)."""
        return _ctpop(x)


def nth_bit_plain(m, j):
    """Position of set bit ``j`` (0 = the lowest) of ``m`` (``0 <= j < popcount(m)``, ``m < 2**62``).

    A binary search on the halves' counts, with no branch that depends on ``m`` (plain, and
    compiled where the CPU has no fast ``pdep``)."""
    pos = 0
    for w in (32, 16, 8, 4, 2, 1):
        low = m & ((1 << w) - 1)
        c = popcount(low)
        up = j >= c
        j = j - c if up else j
        m = m >> w if up else low
        pos = pos + w if up else pos
    return pos


def _pdep_nth_typer(typingctx, m, j):
    """numba intrinsic: set bit ``j`` of ``m`` found by BMI2 ``pdep`` (deposit bit ``j`` into ``m``'s
    set bits), then ``cttz``."""
    from llvmlite import ir
    from numba import types

    def codegen(context, builder, sig, args):
        """``cttz(pdep(1 << j, m))``."""
        i64 = ir.IntType(64)
        pdep = builder.module.declare_intrinsic("llvm.x86.bmi.pdep.64", fnty=ir.FunctionType(i64, [i64, i64]))
        deposited = builder.call(pdep, [builder.shl(ir.Constant(i64, 1), args[1]), args[0]])
        cttz = builder.module.declare_intrinsic("llvm.cttz", [i64, ir.IntType(1)])
        return builder.call(cttz, [deposited, ir.Constant(ir.IntType(1), 1)])

    return types.int64(types.int64, types.int64), codegen


def fast_pdep() -> bool:
    """Whether the CPU numba compiles for has a fast BMI2 ``pdep``: Intel since Haswell and AMD since
    Zen 3 (Zen 1 and 2 run it in microcode, slower than the search).

    A pick through ``pdep`` is a couple of cycles; the search is six dependent steps (the whole
    kernel measured 1.032x with ``pdep``). Both give the same bit: tested against each other."""
    if config.DISABLE_JIT:
        return False
    from numba.core.registry import cpu_target

    codegen = cpu_target.target_context.codegen()
    try:  # numba's own reading of the CPU it compiles for (NUMBA_CPU_NAME / NUMBA_CPU_FEATURES)
        features = codegen._get_host_cpu_features().split(",")
        name = codegen._get_host_cpu_name()
    except AttributeError:  # a numba without these: the search (the same bit, a little slower)
        return False
    return "+bmi2" in features and not name.startswith(("znver1", "znver2", "bdver", "btver"))


nth_bit_search = inline_jit(nth_bit_plain)  # the search compiled, whatever the CPU (tested against nth_bit)

if fast_pdep():
    _pdep_nth = intrinsic(_pdep_nth_typer)

    @inline_jit
    def nth_bit(m, j):
        """Position of set bit ``j`` (0 = the lowest) of ``m`` (``0 <= j < popcount(m)``): BMI2 ``pdep``."""
        return _pdep_nth(m, j)
else:
    nth_bit = nth_bit_search


@jit
def player_base(pk, seat):
    """Offset of a seat's player block in the state vector."""
    return pk.lay[L_PLAYERS] + seat * pk.lay[L_PSTRIDE]


@inline_jit
def work(pk, st, region):
    """A scratch region of the state vector (``L_W_*``) as a view, as large as the layout table makes it."""
    o = pk.lay[region]
    return st[o : o + pk.region_size[region]]


@jit
def sort_into(st, src, dst, n):
    """``st[dst:dst + n]`` = ``st[src:src + n]`` in ascending order (insertion sort, in place)."""
    for i in range(n):
        v = st[src + i]
        j = i
        while j > 0 and st[dst + j - 1] > v:
            st[dst + j] = st[dst + j - 1]
            j -= 1
        st[dst + j] = v


@jit
def lobo(pk, st):
    """Dr. Lobo's track: start plus the cards lying next to him."""
    v = st[S_LOBO_START]
    off = pk.lay[L_NEXT]
    for i in range(st[S_N_NEXT]):
        v += pk.villain_advance[st[off + i]]
    return v


@jit
def _reshuffle(st, base, cap):
    """The discards of the deck at ``base`` become its pile (in id order); how many (0: none)."""
    nd = st[base + D_NDISC]
    if nd == 0:
        return 0
    pile = base + D_PILE
    sort_into(st, pile + cap, pile, nd)
    st[base + D_NDISC] = 0
    return nd


@inline_jit
def draw_card(st, base, cap, rs, source):
    """Draw the top card of the deck at ``base`` (reshuffling its discards if needed); -1 if none."""
    top = st[base + D_TOP]
    if top >= 0:
        st[base + D_TOP] = -1
        return top
    n = st[base + D_COUNT]
    pile = base + D_PILE
    if n == 0:
        n = _reshuffle(st, base, cap)
        if n == 0:
            return -1
    j = next_below_nb(rs, source, n)
    card = st[pile + j]
    st[pile + j] = st[pile + n - 1]
    st[base + D_COUNT] = n - 1
    return card


@jit
def peek_card(st, base, cap, rs, source):
    """Reveal the top card without drawing it (it stays on top for the next draw)."""
    if st[base + D_TOP] < 0:
        st[base + D_TOP] = draw_card(st, base, cap, rs, source)
    return st[base + D_TOP]


@jit
def cards_in(st, base):
    """Cards left to draw (pile plus a revealed top card)."""
    return st[base + D_COUNT] + (1 if st[base + D_TOP] >= 0 else 0)


@jit
def discard(st, base, cap, card):
    """Append a card to the deck's discard pile."""
    nd = st[base + D_NDISC]
    st[base + D_PILE + cap + nd] = card
    st[base + D_NDISC] = nd + 1


@jit
def count_at(st, off, n, where):
    """Number of tokens among ``st[off:off + n]`` lying at ``where``."""
    k = 0
    for t in range(n):
        if st[off + t] == where:
            k += 1
    return k


@jit
def first_at(st, off, n, where):
    """Lowest token id lying at ``where``, or -1."""
    for t in range(n):
        if st[off + t] == where:
            return t
    return -1


@jit
def draw_token(st, off, n, where, rs):
    """Pick a random token lying at ``where`` (ascending ids, TOKENS stream); -1 if none."""
    if n <= 62:  # the tokens at ``where`` as a bit set: counted and picked without a pass per token
        m = 0
        for t in range(n):
            m |= (1 if st[off + t] == where else 0) << t
        k = popcount(m)
        if k == 0:
            return -1
        return nth_bit(m, next_below_nb(rs, TOKENS, k))
    k = count_at(st, off, n, where)
    if k == 0:
        return -1
    j = next_below_nb(rs, TOKENS, k)
    # the j-th of them in id order, without a branch per token (which mispredicts half the time)
    found = -1
    c = 0
    for t in range(n):
        at = st[off + t] == where
        found = t if at & (c == j) else found
        c += at
    return found


@inline_jit
def pick_on_space(st, off, n, space, rs):
    """A blind pick among the face-down tokens at ``space`` (TOKENS stream; a lone token without a draw)."""
    if count_at(st, off, n, space) <= 1:
        return first_at(st, off, n, space)
    return draw_token(st, off, n, space, rs)


@inline_jit
def top_secret_card(pk, st, seat, effect):
    """Lowest-id Top Secret card with ``effect`` in the seat's hand, or -1."""
    if st[S_HELD_TS + seat * N_TS_EFFECTS + effect] == 0:  # (mostly: the hand is searched only if it holds one)
        return -1
    return _top_secret_card(pk, st, seat, effect)


@jit
def _top_secret_card(pk, st, seat, effect):
    """:func:`top_secret_card` where the hand holds a card of the effect: which one."""
    b = player_base(pk, seat)
    best = -1
    for i in range(st[b + P_N_TS]):
        c = st[b + P_TS + i]
        if pk.top_secret_effect[c] == effect and (best < 0 or c < best):
            best = c
    return best


@jit
def play_top_secret(pk, st, seat, card):
    """Remove a card from the hand (order of the rest kept), discard it, count it."""
    b = player_base(pk, seat)
    n = st[b + P_N_TS]
    k = 0
    while st[b + P_TS + k] != card:
        k += 1
    for i in range(k, n - 1):
        st[b + P_TS + i] = st[b + P_TS + i + 1]
    st[b + P_N_TS] = n - 1
    st[S_HELD_TS + seat * N_TS_EFFECTS + pk.top_secret_effect[card]] -= 1
    discard(st, pk.lay[L_TS], pk.lay[L_TSCAP], card)
    st[ST_TOP_SECRET_PLAYED] += 1


# --- small rewards (``sim.rules.encounters`` names; here so set-up and missions share them) ---
@jit
def draw_top_secret(ctx, seat):
    """Draw a Top Secret card into the seat's hand (none if the deck and discards are empty)."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    card = draw_card(st, pk.lay[L_TS], pk.lay[L_TSCAP], rs, TOP_SECRET)
    if card < 0:
        return
    b = player_base(pk, seat)
    n = st[b + P_N_TS]
    st[b + P_TS + n] = card
    st[b + P_N_TS] = n + 1
    st[S_HELD_TS + seat * N_TS_EFFECTS + pk.top_secret_effect[card]] += 1


@jit
def gain_resolve(pk, st, seat, n):
    """Gain ``n`` Resolve, up to the player's maximum."""
    b = player_base(pk, seat)
    st[b + P_RESOLVE] = min(st[b + P_RESOLVE_MAX], st[b + P_RESOLVE] + n)


@jit
def gain_un(pk, st, seat):
    """Take a UN Transport token from the supply, if one is left."""
    if st[S_UN_SUPPLY] > 0:
        st[S_UN_SUPPLY] -= 1
        st[player_base(pk, seat) + P_UN] += 1


@jit
def skill_max(pk, st, seat):
    """The highest basic skill level shown on the seat's Character Mat."""
    return pk.character_skill_max[st[player_base(pk, seat) + P_CHAR]]


@jit
def raise_skill(pk, st, seat, skill, delta):
    """Basic skills stay inside the limits shown on the Character Mat."""
    b = player_base(pk, seat)
    a = b + P_SKILLS + skill
    st[a] = min(skill_max(pk, st, seat), max(pk.character_skill_min[st[b + P_CHAR]], st[a] + delta))


@jit
def take_advanced(pk, st, seat, skill):
    """The seat takes a token of an advanced skill (each seat holding one is counted in S_ADV_HELD)."""
    a = player_base(pk, seat) + P_ADV + skill
    if st[a] == 0:
        st[a] = 1
        st[S_ADV_HELD + skill] += 1


@jit
def airport_open(pk, st, space):
    """Open airport: has one, and is red (never closes) or not closed."""
    return pk.space_airport[space] != 0 and (
        pk.space_red_airport[space] != 0 or st[pk.lay[L_AIRPORT] + space] == 0
    )


# --- status cards held (``sim.rules.status``): L_STATUS[card] = the holder's seat, or -1 ---
# Each seat's cards are also counted by effect, with the dice they add to each skill
# (S_HELD_EFFECTS, S_HELD_DICE; kept here and by take_status): a seat holds a card of an
# effect only now and then, so most look-ups end at the count without a scan of the cards.
# A scan has no branch per card: LLVM turns it into a few vector instructions.
@jit
def held_status_add(pk, st, seat, card, delta):
    """Count status card ``card`` into (``delta`` 1) or out of (-1) the seat's held effects and dice."""
    st[S_HELD_EFFECTS + seat * N_STATUS_EFFECTS + pk.status_card_effect[card]] += delta
    dice = pk.status_card_bonus
    for skill in range(N_SKILLS):
        st[S_HELD_DICE + seat * N_SKILLS + skill] += delta * dice[skill, card]


@inline_jit
def status_first_held(pk, st, seat, effect):
    """The lowest id of a status card with ``effect`` the seat holds, or -1."""
    if st[S_HELD_EFFECTS + seat * N_STATUS_EFFECTS + effect] == 0:
        return -1
    return _status_first_held(pk, st, seat, effect)


@jit
def _status_first_held(pk, st, seat, effect):
    """:func:`status_first_held` where the seat holds a card of the effect: which one."""
    o, n = pk.lay[L_STATUS], pk.scal[K_N_STATUS]
    eff = pk.status_card_effect
    best = n
    for card in range(n):
        best = min(best, card if (st[o + card] == seat) & (eff[card] == effect) else n)
    return best if best < n else -1


@jit
def status_holds_kind(pk, st, seat, kind):
    """The seat holds a card of this status kind."""
    if st[S_HELD_EFFECTS + seat * N_STATUS_EFFECTS + pk.status_effect[kind]] == 0:
        return False
    o, n = pk.lay[L_STATUS], pk.scal[K_N_STATUS]
    typ = pk.status_type
    held = 0
    for card in range(n):
        held += (st[o + card] == seat) & (typ[card] == kind)
    return held > 0


@jit
def status_bonus(pk, st, seat, skill):
    """Dice the seat's skill_modifier status cards add to a test of ``skill``."""
    return st[S_HELD_DICE + seat * N_SKILLS + skill]


@jit
def discard_status(pk, st, card):
    """A status card goes back to the status deck, or out of the game (status.toml [readings] discarded)."""
    o = pk.lay[L_STATUS]
    if st[o + card] >= 0:
        held_status_add(pk, st, st[o + card], card, -1)
    st[o + card] = codes.STATUS_IN_DECK if pk.scal[K_STATUS_DISCARD_DECK] else codes.STATUS_REMOVED


@inline_jit
def extra_mp(pk, st, seat):
    """Walking movement points an extra_move status card adds (they do not stack)."""
    return codes.EXTRA_MP if status_first_held(pk, st, seat, codes.SE_EXTRA_MOVE) >= 0 else 0
