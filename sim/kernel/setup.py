"""Kernel twin of ``sim.rules.setup``: lay out the table of one game in a state vector.

Random draws in the reference's order: villain cards removed (VILLAIN), Top
Secret cards (TOP_SECRET), secret missions then board Intel cities (FATE), the
Intel tokens placed (TOKENS); the strategy answers the set-up questions
(henchmen at level 2, extras) as its readable twin does.
"""

from __future__ import annotations

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel import strategy as decide
from sim.kernel.decks import (
    discard,
    draw_card,
    draw_token,
    draw_top_secret,
    gain_un,
    player_base,
    take_advanced,
    work,
)
from sim.kernel.encounters import advanced_available, take_status
from sim.kernel.layout import (
    C_CHARS,
    C_EASIER,
    C_FIXED_SKILLS,
    C_LOBO_START,
    C_LOC_TARGET,
    C_OVERFLOW,
    C_PLAYERS,
    C_RANDOM_LINEUP,
    D_COUNT,
    D_PILE,
    D_TOP,
    K_N_CHARACTERS,
    K_N_CLOSE,
    K_N_ENCOUNTER,
    K_N_FATE,
    K_N_HENCHMEN,
    K_N_INTEL,
    K_N_STATUS,
    K_N_TOP_SECRET,
    K_N_UN,
    K_N_VILLAIN,
    L_FATE,
    L_FCAP,
    L_GREEN,
    L_HLEVEL,
    L_INTEL,
    L_REMOVED,
    L_STATUS,
    L_TS,
    L_VILLAIN,
    L_W_CARDS,
    L_W_CHOSEN,
    L_W_CUT,
    L_W_EFFECT,
    L_W_KEPT,
    L_W_LEFT,
    L_W_LINEUP,
    L_W_PLUS_ONE,
    N_ADV,
    N_SKILLS,
    P_ADV,
    P_CHAR,
    P_GIVES,
    P_LIFE,
    P_RESOLVE,
    P_RESOLVE_MAX,
    P_SKILLS,
    P_SPACE,
    S_ACTIVE,
    S_CLOSE_LEFT,
    S_LOBO_START,
    S_LOC_TARGET,
    S_N_REMOVED,
    S_OUTCOME,
    S_OVERFLOW,
    S_UN_SUPPLY,
    S_WATCHED,
)
from sim.kernel.missions import deal_missions
from sim.rng import FATE, SETUP, VILLAIN, init_state_nb, next_below_nb
from sim.rules.setup import un_left as un_left_plain

jit = njit(**KERNEL_OPTIONS)
# views into the state vector cannot be returned from a runtime-free function: inline them
inline_jit = njit(inline="always", **KERNEL_OPTIONS)
un_left = inline_jit(un_left_plain)  # the reading of sim.rules.setup, compiled


@jit
def _init_deck(st, base, n):
    """A deck of cards 0 .. n - 1 in order."""
    st[base + D_COUNT] = n
    st[base + D_TOP] = -1
    for i in range(n):
        st[base + D_PILE + i] = i


@inline_jit
def setup_work(pk, st):
    """Set-up's scratch regions (views sized by the layout table): kept, removed, plus_one
    ([n_villain] each), left ([n_characters]), lineup ([MAX_PLAYERS]), cards
    ([n_encounter]), chosen ([n_henchmen])."""
    return (
        work(pk, st, L_W_KEPT),
        work(pk, st, L_W_CUT),
        work(pk, st, L_W_PLUS_ONE),
        work(pk, st, L_W_LEFT),
        work(pk, st, L_W_LINEUP),
        work(pk, st, L_W_CARDS),
        work(pk, st, L_W_CHOSEN),
    )


@jit
def villain_deck_for(ctx, players):
    """Villain cards in play (the pile) and removed (``st`` removed list), both ascending."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    n_v = pk.scal[K_N_VILLAIN]
    kept, removed, plus_one, _left, _lineup, _cards, _chosen = setup_work(pk, st)
    kept[:] = 0  # 1 = kept
    removed[:] = 0
    for card in range(n_v):
        if pk.setup_remove_injury_cards[players] and pk.villain_injury[card]:
            removed[card] = 1
        elif (
            pk.setup_remove_minus_one[players]
            and not pk.villain_injury[card]
            and pk.villain_advance[card] == -1
        ):
            removed[card] = 1
        else:
            kept[card] = 1
    n_plus = 0
    for card in range(n_v):
        if kept[card] and not pk.villain_injury[card] and pk.villain_advance[card] == 1:
            plus_one[n_plus] = card
            n_plus += 1
    for _ in range(pk.setup_remove_random_plus_one[players]):
        if n_plus == 0:
            raise RuntimeError(
                "setup.toml: more random +1 villain cards to remove than the deck holds"
            )
        j = next_below_nb(rs, VILLAIN, n_plus)
        card = plus_one[j]
        plus_one[j] = plus_one[n_plus - 1]
        n_plus -= 1
        removed[card] = 1
        kept[card] = 0
    base = pk.lay[L_VILLAIN]
    n = 0
    for card in range(n_v):
        if kept[card]:
            st[base + D_PILE + n] = card
            n += 1
    st[base + D_COUNT] = n
    st[base + D_TOP] = -1
    r = 0
    for card in range(n_v):
        if removed[card]:
            st[pk.lay[L_REMOVED] + r] = card
            r += 1
    st[S_N_REMOVED] = r


@jit
def random_lineup(pk, rs, players, out, left):
    """A line-up drawn from the SETUP stream: distinct characters while they last, then repeats.

    ``left`` is scratch for ``n_characters`` ints.
    """
    n_chars = pk.scal[K_N_CHARACTERS]
    n_left = 0
    for seat in range(players):
        if n_left == 0:
            for i in range(n_chars):
                left[i] = i
            n_left = n_chars
        j = next_below_nb(rs, SETUP, n_left)
        out[seat] = left[j]
        left[j] = left[n_left - 1]
        n_left -= 1


@jit
def make_player(ctx, seat, character):
    """Fill a seat's player block for a character (mat values and the player-count extras)."""
    pk, cfg, st = ctx.pk, ctx.cfg, ctx.st
    b = player_base(pk, seat)
    n = cfg[C_PLAYERS]
    if pk.character_reduced_resolve_cut[character]:
        cut = pk.setup_resolve_cut_reduced[n]
    else:
        cut = pk.setup_resolve_cut[n]
    st[b + P_CHAR] = character
    st[b + P_SPACE] = pk.character_start_space[character]
    for s in range(N_SKILLS):
        st[b + P_SKILLS + s] = pk.character_skills[character, s]
    st[b + P_RESOLVE] = max(0, pk.character_resolve_start[character] - cut)
    st[b + P_RESOLVE_MAX] = pk.character_resolve_max[character]
    st[b + P_LIFE] = pk.character_life[character]
    for s in range(N_ADV):
        st[b + P_ADV + s] = 0  # taken in setup_game (choose_advanced_skills)
    st[b + P_GIVES] = pk.character_gives_un[character]


@jit
def deal_start_status(pk, st, seat, character):
    """The status cards the character starts with, each the lowest-id copy left (none left: none)."""
    o = pk.lay[L_STATUS]
    for j in range(pk.character_start_status.shape[1]):
        kind = pk.character_start_status[character, j]
        if kind < 0:
            continue
        for card in range(pk.scal[K_N_STATUS]):
            if st[o + card] == -1 and pk.status_type[card] == kind:
                take_status(pk, st, seat, card)
                break


@jit
def choose_advanced_skills(ctx, seat):
    """Set-up step 2: pick as many advanced skills as the mat lists (or take the fixed ones)."""
    pk, cfg, st = ctx.pk, ctx.cfg, ctx.st
    b = player_base(pk, seat)
    ch = st[b + P_CHAR]
    n_own = 0
    for s in range(N_ADV):
        if pk.character_advanced[ch, s]:
            n_own += 1
            if cfg[C_FIXED_SKILLS] and advanced_available(ctx, s):
                take_advanced(pk, st, seat, s)
    if cfg[C_FIXED_SKILLS]:
        return
    options = work(pk, st, L_W_EFFECT)[:N_ADV]
    for _ in range(n_own):
        n = 0
        for s in range(N_ADV):
            if pk.character_advanced_choices[ch, s] and not st[b + P_ADV + s] and advanced_available(ctx, s):
                options[n] = s
                n += 1
        if n == 0:
            return
        i = decide.setup_advanced_skill(ctx, seat, options, n)
        if i < 0 or i >= n:
            raise ValueError("strategy chose an illegal advanced skill at set-up")
        take_advanced(pk, st, seat, options[i])


@jit
def setup_game(ctx, seed, game):
    """Lay out the table for one game in ``st`` (zeroed or reused) and seed ``rs``."""
    pk, cfg, st, rs = ctx.pk, ctx.cfg, ctx.st, ctx.rs
    n = cfg[C_PLAYERS]
    st[:] = 0
    init_state_nb(rs, seed, game)
    _kept, _removed, _plus, left, lineup, cards, chosen = setup_work(pk, st)
    if cfg[C_RANDOM_LINEUP]:
        random_lineup(pk, rs, n, lineup, left)
    else:
        for seat in range(n):
            lineup[seat] = cfg[C_CHARS + seat]
    villain_deck_for(ctx, n)
    for seat in range(n):
        make_player(ctx, seat, lineup[seat])
    st[S_LOBO_START] = cfg[C_LOBO_START]
    st[S_LOC_TARGET] = cfg[C_LOC_TARGET]
    st[S_OVERFLOW] = cfg[C_OVERFLOW]
    st[S_OUTCOME] = -1
    st[S_ACTIVE] = 0
    st[S_WATCHED] = -1
    st[S_CLOSE_LEFT] = pk.scal[K_N_CLOSE]
    st[S_UN_SUPPLY] = pk.scal[K_N_UN]
    n_h = pk.scal[K_N_HENCHMEN]
    for h in range(n_h):
        st[pk.lay[L_HLEVEL] + h] = 1
        st[pk.lay[L_GREEN] + h] = codes.SUPPLY
    for t in range(pk.scal[K_N_INTEL]):
        st[pk.lay[L_INTEL] + t] = codes.SUPPLY
    n_f = pk.scal[K_N_FATE]
    _init_deck(st, pk.lay[L_FATE], n_f)
    n_ts = pk.scal[K_N_TOP_SECRET]
    _init_deck(st, pk.lay[L_TS], n_ts)
    n_e = pk.scal[K_N_ENCOUNTER]
    n_d = len(codes.DECKS)
    for d in range(n_d):
        st[pk.deck_base[d] + D_TOP] = -1  # (the counts are 0: st was cleared)
    # one pass: each card onto its deck's pile, in ascending order. The pile's count stays in a
    # register while one deck's cards follow each other (a deck's cards have consecutive ids):
    # a read-modify-write of the count per card waited on the store of the card before.
    d_open, k = -1, 0
    for x in range(n_e):
        d = pk.encounter_deck[x]
        if not 0 <= d < n_d:
            continue
        if d != d_open:
            if d_open >= 0:
                st[pk.deck_base[d_open] + D_COUNT] = k
            d_open, k = d, st[pk.deck_base[d] + D_COUNT]
        st[pk.deck_base[d] + D_PILE + k] = x
        k += 1
    if d_open >= 0:
        st[pk.deck_base[d_open] + D_COUNT] = k
    n_s = pk.scal[K_N_STATUS]
    for card in range(n_s):
        st[pk.lay[L_STATUS] + card] = -1
    for seat in range(n):
        for _ in range(pk.character_start_un[lineup[seat]]):
            gain_un(pk, st, seat)
    for seat in range(n):
        deal_start_status(pk, st, seat, lineup[seat])
    for seat in range(n):
        choose_advanced_skills(ctx, seat)
    # henchmen starting at level 2 (the players choose which)
    k = 0 if (cfg[C_EASIER] and pk.easier_henchmen_level1[n]) else pk.setup_henchmen_level2[n]
    if k:
        decide.setup_level2_henchmen(ctx, n, k, chosen[:k])
        for i in range(k):
            st[pk.lay[L_HLEVEL] + chosen[i]] = 2
    # extra UN Transports and Top Secret cards by player count (and the easier variant)
    for seat in range(n):
        giver = st[player_base(pk, seat) + P_GIVES] != 0
        un = pk.setup_giver_extra_un[n] if giver else pk.setup_extra_un[n]
        ts = pk.setup_giver_extra_top_secret[n] if giver else pk.setup_extra_top_secret[n]
        choice = pk.setup_extra_choice[n]
        if choice:
            cap = pk.setup_giver_choice_max_un[n] if giver else choice
            a = decide.setup_extras(ctx, seat, choice, un_left(st[S_UN_SUPPLY], un, cap))
            un += a
            ts += choice - a
        if cfg[C_EASIER]:
            ts += pk.easier_extra_top_secret[n]
            e = pk.easier_extra_choice[n]
            if e:
                a = decide.setup_extras(ctx, seat, e, un_left(st[S_UN_SUPPLY], un, e))
                un += a
                ts += e - a
        for _ in range(un):
            gain_un(pk, st, seat)
        for _ in range(ts):
            draw_top_secret(ctx, seat)
    for seat in range(n):
        deal_missions(ctx, seat)
    fb, fc = pk.lay[L_FATE], pk.lay[L_FCAP]
    for _ in range(pk.setup_board_intel[n]):
        card = draw_card(st, fb, fc, rs, FATE)
        city = pk.fate_city[card]
        discard(st, fb, fc, card)
        t = draw_token(st, pk.lay[L_INTEL], pk.scal[K_N_INTEL], codes.SUPPLY, rs)
        st[pk.lay[L_INTEL] + t] = city
