"""Kernel twin of ``sim.rules.villain`` (and ``endgame.check_lobo``).

A game ends by setting ``st[S_OUTCOME]``; every caller returns at once when it
is set, exactly where the reference raises ``GameOver``.
"""

from __future__ import annotations

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel import strategy as decide
from sim.kernel.decks import (
    discard,
    discard_status,
    draw_card,
    draw_token,
    lobo,
    play_top_secret,
    player_base,
    status_first_held,
    top_secret_card,
)
from sim.kernel.layout import (
    K_LOBO_LOSS,
    K_N_HENCHMEN,
    K_N_INTEL,
    L_AIRPORT,
    L_GREEN,
    L_INTEL,
    L_NEXT,
    L_VCAP,
    L_VILLAIN,
    P_INJ,
    P_LIFE,
    S_ACTIVE,
    S_CLOSE_LEFT,
    S_N_NEXT,
    S_OUTCOME,
    S_OVERFLOW,
    ST_AIRPORTS_CLOSED,
    ST_INJURIES_TAKEN,
    ST_KNOCKOUTS,
    ST_OVERFLOWS,
    ST_VILLAIN_DRAWN,
)
from sim.rng import TOKENS, VILLAIN, next_below_nb

jit = njit(**KERNEL_OPTIONS)
inline_jit = njit(inline="always", **KERNEL_OPTIONS)



@jit
def check_lobo(pk, st):
    """Dr. Lobo at 9 (or more): the players lose at once."""
    if lobo(pk, st) >= pk.scal[K_LOBO_LOSS]:
        st[S_OUTCOME] = codes.LOSS_LOBO


@inline_jit
def draw_villain_card(ctx):
    """Draw the next villain card (reshuffling its discards when the pile is empty)."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    card = draw_card(st, pk.lay[L_VILLAIN], pk.lay[L_VCAP], rs, VILLAIN)
    if card < 0:
        raise RuntimeError("villain deck and discard pile are both empty")
    st[ST_VILLAIN_DRAWN] += 1
    return card


@inline_jit
def protect(pk, st, seat, n):
    """``n`` injuries less what an injury_protection status card cancels (the card is discarded)."""
    card = status_first_held(pk, st, seat, codes.SE_INJURY_PROTECTION)
    if card >= 0:
        n -= min(n, pk.status_amount[pk.status_type[card]])
        discard_status(pk, st, card)
    return n


@jit
def villain_advancement(ctx):
    """Draw a villain card and apply its Villain Advancement side (see the reference).

    The reference recurses (an Injury card can knock the player out, which draws
    again); numba's on-disk cache breaks on recursion, so this loops instead.
    """
    pk, st = ctx.pk, ctx.st
    seat = st[S_ACTIVE]
    b = player_base(pk, seat)
    while True:
        card = draw_villain_card(ctx)
        ts = top_secret_card(pk, st, seat, codes.TS_CANCEL_ADVANCE)
        if ts >= 0 and decide.cancel_advance(ctx, seat, card):
            play_top_secret(pk, st, seat, ts)
            discard(st, pk.lay[L_VILLAIN], pk.lay[L_VCAP], card)
            return
        if pk.villain_injury[card]:
            discard(st, pk.lay[L_VILLAIN], pk.lay[L_VCAP], card)
            # take_injuries(seat, 1), whose knock-out advances the villain again
            if protect(pk, st, seat, 1) == 0:
                return
            st[b + P_INJ] += 1
            st[ST_INJURIES_TAKEN] += 1
            if st[b + P_INJ] >= st[b + P_LIFE]:
                st[b + P_INJ] = 0
                st[ST_KNOCKOUTS] += 1
                continue
            return
        n = st[S_N_NEXT]
        st[pk.lay[L_NEXT] + n] = card
        st[S_N_NEXT] = n + 1
        check_lobo(pk, st)
        return


@jit
def v_minus_1(ctx):
    """V-1: shuffle the cards next to Dr. Lobo, discard one at random, recompute the track."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    n = st[S_N_NEXT]
    if n == 0:
        return
    off = pk.lay[L_NEXT]
    j = next_below_nb(rs, VILLAIN, n)
    card = -1
    for a in range(n):  # the j-th smallest card id (ids are distinct): pile sorted, then [j]
        v = st[off + a]
        rank = 0
        for c in range(n):
            if st[off + c] < v:
                rank += 1
        if rank == j:
            card = v
            break
    k = 0
    while st[off + k] != card:
        k += 1
    for i in range(k, n - 1):
        st[off + i] = st[off + i + 1]
    st[S_N_NEXT] = n - 1
    discard(st, pk.lay[L_VILLAIN], pk.lay[L_VCAP], card)
    check_lobo(pk, st)


@jit
def take_injuries(ctx, seat, n):
    """Injure a player; reaching life points knocks them out (discard all, villain advances)."""
    pk, st = ctx.pk, ctx.st
    if n <= 0:
        return
    n = protect(pk, st, seat, n)
    if n <= 0:
        return
    b = player_base(pk, seat)
    st[b + P_INJ] += n
    st[ST_INJURIES_TAKEN] += n
    if st[b + P_INJ] >= st[b + P_LIFE]:
        st[b + P_INJ] = 0
        st[ST_KNOCKOUTS] += 1
        villain_advancement(ctx)


@jit
def heal(pk, st, seat, n):
    """Heal ``n`` injuries (never below zero)."""
    b = player_base(pk, seat)
    st[b + P_INJ] = max(0, st[b + P_INJ] - n)


@jit
def in_region(pk, space, region):
    """USSR cities count as Asia too (FAQ 4)."""
    if pk.space_kind[space] == codes.OCEAN:
        return False
    if region == codes.USSR_REGION:
        return pk.space_ussr[space] != 0
    return pk.space_deck[space] == region


@inline_jit
def place_intel(ctx, space):
    """Add one yellow Intel at a space: from the supply, else a random one from the Pool."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    off, n = pk.lay[L_INTEL], pk.scal[K_N_INTEL]
    t = draw_token(st, off, n, codes.SUPPLY, rs)
    if t < 0:
        t = draw_token(st, off, n, codes.POOL, rs)
    if t < 0:
        return
    st[off + t] = space


@jit
def close_airport(pk, st, space):
    """Close an airport; red airports never close; closures are limited by the tokens."""
    a = pk.lay[L_AIRPORT] + space
    if not pk.space_airport[space] or pk.space_red_airport[space] or st[a] != 0:
        return
    if st[S_CLOSE_LEFT] <= 0:
        return
    st[a] = 1
    st[S_CLOSE_LEFT] -= 1
    st[ST_AIRPORTS_CLOSED] += 1


@jit
def end_of_turn_event(ctx, card):
    """Apply a card's End of Turn side: remove Intel, then add Intel, then close an airport."""
    pk, st = ctx.pk, ctx.st
    region = pk.villain_remove_region[card]
    if region >= 0:
        off, n = pk.lay[L_INTEL], pk.scal[K_N_INTEL]
        # in_region of every space is a table of the map; each token is rewritten without a
        # branch on where it lies (such branches follow the board and mispredict)
        inside = pk.space_in_region
        for t in range(n):
            loc = st[off + t]
            gone = (loc >= 0) & (inside[region, max(loc, 0)] != 0)
            st[off + t] = codes.SUPPLY if gone else loc
    for i in range(pk.villain_add_intel.shape[1]):
        space = pk.villain_add_intel[card, i]
        if space >= 0:
            place_intel(ctx, space)
    target = pk.villain_close_city[card]
    if target >= 0:
        close_airport(pk, st, target)
    discard(st, pk.lay[L_VILLAIN], pk.lay[L_VCAP], card)


@jit
def intel_overflow(ctx):
    """Too many yellow tokens on the board: clear them all and keep at most one green token."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    off, n = pk.lay[L_INTEL], pk.scal[K_N_INTEL]
    on_board = 0
    for t in range(n):
        if st[off + t] >= 0:
            on_board += 1
    if on_board <= st[S_OVERFLOW]:
        return
    st[ST_OVERFLOWS] += 1
    for t in range(n):
        if st[off + t] >= 0:
            st[off + t] = codes.SUPPLY
    goff, ng = pk.lay[L_GREEN], pk.scal[K_N_HENCHMEN]
    greens = 0
    for t in range(ng):
        if st[goff + t] >= 0:
            greens += 1
    if greens > 1:
        j = next_below_nb(rs, TOKENS, greens)
        kept = -1
        for t in range(ng):
            if st[goff + t] >= 0:
                if j == 0:
                    kept = t
                j -= 1
        for t in range(ng):
            if st[goff + t] >= 0 and t != kept:
                st[goff + t] = codes.SUPPLY


@jit
def villain_phase(ctx, cards):
    """Draw 1 villain card (2 after a rest), apply the End of Turn events, then check overflow."""
    for _ in range(cards):
        card = draw_villain_card(ctx)
        end_of_turn_event(ctx, card)
    intel_overflow(ctx)
