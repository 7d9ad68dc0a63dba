"""Kernel twins of the built-in strategies' decisions (``strategies/``), by strategy id.

Each decision takes the game's context ``ctx`` (:class:`sim.kernel.layout.Context`),
then the deciding seat, then what is being decided (the options). Every seat has its
own strategy: ``ctx.sid[seat]`` is :data:`~sim.kernel.layout.RANDOM` or
:data:`~sim.kernel.layout.HEURISTIC` (``heuristic``, ``cautious``, ``bold`` and ``tuned``
differ only in their parameters), ``ctx.prm[seat]`` the seat's parameter vector
(:func:`sim.kernel.layout.team_vectors`). Each function makes the
same choice as its readable twin, ties broken the same way; the random strategy
draws from the STRATEGY stream in the same order.
"""

from __future__ import annotations

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel.decks import (
    airport_open,
    extra_mp,
    lobo,
    player_base,
    status_bonus,
    top_secret_card,
    work,
)
from sim.kernel.layout import (
    C_PLAYERS,
    H_AUTO_PASS_BELOW,
    H_CANCEL_AT,
    H_DICE_STOP,
    H_EXCH_MIN_POOL,
    H_EXCH_WHEN,
    H_FINAL_POOL_MIN,
    H_GAMBLE_P,
    H_GAMBLE_RESOLVE,
    H_MAX_GREENS,
    H_MISSION_REWARD,
    H_MOVE_RESOLVE,
    H_PATIENCE,
    H_PLUS_ONE,
    H_POOL_TARGET,
    H_RELEASE_AT_TARGET,
    H_REROLL,
    H_RESERVE,
    H_REST_MARGIN,
    H_UN_MIN_DIST,
    H_WATCH_FAIL,
    K_LOBO_LOSS,
    K_N_CITIES,
    K_N_HENCHMEN,
    K_N_INTEL,
    L_GREEN,
    L_INTEL,
    L_W_L2_POOL,
    L_W_L2_SCORES,
    L_W_L2_TAKEN,
    N_ADV,
    P_ADV,
    P_FLIPPED,
    P_INJ,
    P_LIFE,
    P_MISSIONS,
    P_N_MISSIONS,
    P_RESOLVE,
    P_RESOLVE_MAX,
    P_SKILLS,
    P_SPACE,
    P_UN,
    RANDOM,
    S_ADV_HELD,
    S_DICE_RES,
    S_LOC_TARGET,
    S_LOC_TRACK,
    S_MOVE_RES,
    S_TURN,
    S_WATCHED,
)
from sim.poker import HIGH_CARD, choose_exchange_nb, hand_category_nb, hand_value_arr_nb
from sim.rng import STRATEGY, next_below_nb

jit = njit(**KERNEL_OPTIONS)
# views into the state vector cannot be returned from a runtime-free function: inline them;
# the small helpers and decisions asked several times a turn are inlined too (numba's own inlining,
# which LLVM's heuristics did not do: a call, its status check and the bundle reloads cost more than they do)
inline_jit = njit(inline="always", **KERNEL_OPTIONS)



@inline_jit
def coin(ctx):
    """The random strategy's fair coin."""
    rs = ctx.rs
    return next_below_nb(rs, STRATEGY, 2) == 1


@inline_jit
def p_pass(ctx, seat, skill_total, needed):
    """Heuristic's exact P(pass) estimate (``HeuristicStrategy._p_pass``)."""
    pk, st, prm = ctx.pk, ctx.st, ctx.prm
    b = player_base(pk, seat)
    k = min(max(skill_total, 0), 5)
    can_reroll = prm[seat, H_REROLL] != 0 and st[b + P_RESOLVE] > 0 and st[S_DICE_RES] == 0
    return pk.pass_table[k, min(needed, 2) - 1, 1 if can_reroll else 0]


@inline_jit
def may_spend(ctx, seat, henchman):
    """Heuristic: Resolve may be spent (all of it on a henchman, else only above the reserve)."""
    pk, st, prm = ctx.pk, ctx.st, ctx.prm
    b = player_base(pk, seat)
    r = st[b + P_RESOLVE]
    return r > 0 and (henchman or r > prm[seat, H_RESERVE])


@inline_jit
def watch_fail(ctx, seat, henchman, no_advance):
    """Heuristic: the Watch shows a -1 card, so fail an ordinary test on purpose."""
    pk, st, prm = ctx.pk, ctx.st, ctx.prm
    c = st[S_WATCHED]
    if prm[seat, H_WATCH_FAIL] == 0 or c < 0:
        return False
    adv = 0 if pk.villain_injury[c] else pk.villain_advance[c]
    return adv < 0 and henchman < 0 and not no_advance


# --- set-up ----------------------------------------------------------------------------
@inline_jit
def _level2_work(pk, st):
    """Scratch for :func:`setup_level2_henchmen`: three [n_henchmen] regions (pool, scores, taken)."""
    return work(pk, st, L_W_L2_POOL), work(pk, st, L_W_L2_SCORES), work(pk, st, L_W_L2_TAKEN)


@jit
def setup_level2_henchmen(ctx, players, k, out):
    """Fill ``out[:k]`` with the henchmen chosen to start at level 2 (in the strategy's order)."""
    pk, st, rs, sid = ctx.pk, ctx.st, ctx.rs, ctx.sid[0]  # seat 0 decides
    n_h = pk.scal[K_N_HENCHMEN]
    pool, scores, taken = _level2_work(pk, st)
    if sid == RANDOM:
        for h in range(n_h):
            pool[h] = h
        n_left = n_h
        for i in range(k):
            j = next_below_nb(rs, STRATEGY, n_left)
            out[i] = pool[j]
            for x in range(j, n_left - 1):  # list.pop(j): the rest keep their order
                pool[x] = pool[x + 1]
            n_left -= 1
        return
    for h in range(n_h):
        score = -99
        for i in range(pk.henchman_option_skill.shape[2]):
            s = pk.henchman_option_skill[h, 1, i]
            if s < 0:
                continue
            team = -(1 << 40)
            for seat in range(players):
                v = st[player_base(pk, seat) + P_SKILLS + s]
                if v > team:
                    team = v
            score = max(
                score,
                team
                + pk.henchman_option_modifier[h, 1, i]
                - 2 * (pk.henchman_option_successes[h, 1, i] - 1),
            )
        scores[h] = score
        taken[h] = 0
    for i in range(k):
        best = -1
        for h in range(n_h):
            if not taken[h] and (best < 0 or scores[h] > scores[best]):
                best = h
        taken[best] = 1
        out[i] = best


@jit
def setup_extras(ctx, seat, n, max_un):
    """How many of ``n`` extras to take as UN Transports."""
    rs, sid = ctx.rs, ctx.sid[seat]
    if sid == RANDOM:
        return next_below_nb(rs, STRATEGY, min(n, max_un) + 1)
    return min(1, n, max_un)


@jit
def setup_advanced_skill(ctx, seat, skills, n):
    """Index into ``skills[:n]`` of the advanced skill to pick at set-up (``setup_advanced_skill``)."""
    pk, st, rs, sid = ctx.pk, ctx.st, ctx.rs, ctx.sid[seat]
    if sid == RANDOM:
        return next_below_nb(rs, STRATEGY, n)
    b = player_base(pk, seat)
    first = True
    for s in range(N_ADV):
        if st[b + P_ADV + s]:
            first = False
    best, k0, k1 = 0, -1, -1
    for i in range(n):
        s = skills[i]
        held = st[S_ADV_HELD + s] > 0  # (a seat holds it)
        a = pk.autopass_level1_counts[s] if first and not held else 0
        e = pk.autopass_encounter_counts[s]
        # the highest (a, e), ties to the lower skill (skills ascend, so the first one)
        if a > k0 or (a == k0 and e > k1):
            best, k0, k1 = i, a, e
    return best


# --- villain ------------------------------------------------------------------------------
@jit
def cancel_advance(ctx, seat, card):
    """Play the Top Secret card that cancels this villain advancement?"""
    pk, st, sid, prm = ctx.pk, ctx.st, ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return coin(ctx)
    value = 0 if pk.villain_injury[card] else pk.villain_advance[card]
    return value >= prm[seat, H_CANCEL_AT] or (value > 0 and lobo(pk, st) + value >= pk.scal[K_LOBO_LOSS])


# --- tests -----------------------------------------------------------------------------------
@jit
def play_auto_pass(ctx, seat, allowed, successes, henchman):
    """Play the Top Secret card that passes this test automatically?"""
    sid, prm = ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return coin(ctx)
    if henchman < 0:
        return False
    return p_pass(ctx, seat, allowed, successes) < prm[seat, H_AUTO_PASS_BELOW]


@inline_jit
def play_two_dice(ctx, seat, allowed, henchman):
    """Play the Top Secret card that adds two dice to this test?"""
    sid = ctx.sid[seat]
    if sid == RANDOM:
        return coin(ctx)
    return henchman >= 0 and allowed < 5


@inline_jit
def use_auto_pass(ctx, seat, skill, henchman, no_advance):
    """Use an advanced skill's automatic pass (``use_auto_pass``)?"""
    if ctx.sid[seat] == RANDOM:
        return coin(ctx)
    return not watch_fail(ctx, seat, henchman, no_advance)


@inline_jit
def draw_die(ctx, seat, successes, henchman, no_advance, n_drawn):
    """Draw one more die from the bag for this test?"""
    pk, st, sid, prm = ctx.pk, ctx.st, ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return coin(ctx)
    if watch_fail(ctx, seat, henchman, no_advance):
        return False
    b = player_base(pk, seat)
    if n_drawn >= successes and st[b + P_LIFE] - st[b + P_INJ] <= prm[seat, H_DICE_STOP]:
        return False
    return True


@inline_jit
def resolve_plus_one(ctx, seat, henchman, no_advance, n_drawn):
    """Spend 1 Resolve for one more die?"""
    sid, prm = ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return coin(ctx)
    mode = prm[seat, H_PLUS_ONE]
    if watch_fail(ctx, seat, henchman, no_advance) or mode == 0 or n_drawn >= 5:
        return False
    if mode == 1 and henchman < 0:
        return False
    return may_spend(ctx, seat, henchman >= 0)


@jit
def reroll(ctx, seat, successes, henchman, no_advance, dice, faces, n):
    """Index of the die to reroll for 1 Resolve, or -1."""
    pk, rs, sid, prm = ctx.pk, ctx.rs, ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return next_below_nb(rs, STRATEGY, n + 1) - 1
    if prm[seat, H_REROLL] == 0 or watch_fail(ctx, seat, henchman, no_advance):
        return -1
    succ = 0
    for i in range(n):
        succ += pk.die_success[dice[i], faces[i]]
    if succ != successes - 1 or not may_spend(ctx, seat, henchman >= 0):
        return -1
    best, k0, k1 = -1, 0, 0
    for i in range(n):
        d, f = dice[i], faces[i]
        if pk.die_success[d, f]:
            continue
        a = 0
        for x in range(6):
            a += pk.die_success[d, x]
        b = pk.die_injury[d, f]
        # key (a, b, -i): the first die wins ties
        if best < 0 or a > k0 or (a == k0 and b > k1):
            best, k0, k1 = i, a, b
    return best


@jit
def gamble_exchange(ctx, seat, ranks, suits, free):
    """(bitmask of hand positions to exchange, spend 1 Resolve)."""
    pk, st, rs, sid, prm = ctx.pk, ctx.st, ctx.rs, ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        spend = st[player_base(pk, seat) + P_RESOLVE] > 0 and coin(ctx)
        limit = 5 if spend else free
        n = next_below_nb(rs, STRATEGY, limit + 1)
        mask = 0  # positions still in the list [0, 1, 2, 3, 4] are the bits not yet set
        for k in range(n):
            j = next_below_nb(rs, STRATEGY, 5 - k)
            for p in range(5):  # the j-th position left, in ascending order
                if not (mask >> p) & 1:
                    if j == 0:
                        mask |= 1 << p
                        break
                    j -= 1
        return mask, spend and n > free
    if prm[seat, H_GAMBLE_RESOLVE] != 0 and may_spend(ctx, seat, False):
        if hand_category_nb(hand_value_arr_nb(ranks, suits)) == HIGH_CARD:
            mask5 = choose_exchange_nb(ranks, suits, 5)
            bits = 0
            for i in range(5):
                bits += (mask5 >> i) & 1
            if bits > free:
                return mask5, True
    return choose_exchange_nb(ranks, suits, free), False


# --- what the heuristic wants (public facts of the view) ----------------------------------
@inline_jit
def pool_size(pk, st):
    """Intel tokens in the Pool."""
    off = pk.lay[L_INTEL]
    k = 0
    for t in range(pk.scal[K_N_INTEL]):
        if st[off + t] == codes.POOL:
            k += 1
    return k


@inline_jit
def n_green_spaces(pk, st):
    """Distinct spaces holding a green Location token."""
    off, n = pk.lay[L_GREEN], pk.scal[K_N_HENCHMEN]
    k = 0
    for t in range(n):
        s = st[off + t]
        if s < 0:
            continue
        dup = False
        for u in range(t):
            if st[off + u] == s:
                dup = True
        if not dup:
            k += 1
    return k


@inline_jit
def green_supply_size(pk, st):
    """Green Location tokens left in the supply."""
    off = pk.lay[L_GREEN]
    k = 0
    for t in range(pk.scal[K_N_HENCHMEN]):
        if st[off + t] == codes.SUPPLY:
            k += 1
    return k


@inline_jit
def impatient(ctx, seat):
    """Heuristic: round ``patience_rounds`` has come (the round of turn ``S_TURN``)."""
    cfg, st, prm = ctx.cfg, ctx.st, ctx.prm
    n = cfg[C_PLAYERS]
    return (st[S_TURN] + n - 1) // n >= prm[seat, H_PATIENCE]


@inline_jit
def wants_exchange(ctx, seat, pool):
    """Heuristic: exchange a yellow Intel token for a green Location token now? (``pool``: :func:`pool_size`)"""
    pk, st, prm = ctx.pk, ctx.st, ctx.prm
    if green_supply_size(pk, st) == 0:
        return False
    greens = n_green_spaces(pk, st)
    if impatient(ctx, seat):
        return greens < max(prm[seat, H_MAX_GREENS], 1.0)
    when = prm[seat, H_EXCH_WHEN]
    if when == 0 or greens >= prm[seat, H_MAX_GREENS]:
        return False
    return when == 2 or pool >= prm[seat, H_EXCH_MIN_POOL]


@inline_jit
def wants_intel(ctx, seat, pool):
    """Heuristic: take Intel (the Pool is short of its target, or an exchange is wanted)?"""
    return pool < ctx.prm[seat, H_POOL_TARGET] or wants_exchange(ctx, seat, pool)


@inline_jit
def ready_to_fight(ctx, seat, pool):
    """Fight henchmen unless the win would end the game with too small a Pool (released once
    impatient, and with ``release_at_pool_target`` when the Pool holds ``pool_target``)."""
    st, prm = ctx.st, ctx.prm
    if st[S_LOC_TRACK] < st[S_LOC_TARGET] - 1:
        return True
    if pool >= prm[seat, H_FINAL_POOL_MIN]:
        return True
    if prm[seat, H_RELEASE_AT_TARGET] != 0 and pool >= prm[seat, H_POOL_TARGET]:
        return True
    return impatient(ctx, seat)


@inline_jit
def _nearest(pk, st, off, n, here, best, best_d):
    """Fold tokens at ``st[off:off+n]`` (spaces >= 0) into the nearest (distance, space)."""
    # the smallest key (distance, space) as one int, kept with conditional moves: a branch per
    # token on where it lies mispredicts; tokens off the map (< 0) never win
    dist = pk.hop_distance
    none = 1 << 62
    key = (best_d << 32) | best if best >= 0 else none
    for t in range(n):
        s = st[off + t]
        k = (dist[here, max(s, 0)] << 32) | s if s >= 0 else none
        key = min(key, k)
    if key == none:
        return -1, 0
    return key & 0xFFFFFFFF, key >> 32


@jit
def target(ctx, seat):
    """Nearest green token, else (if Intel is wanted) nearest yellow, else a mission city; or -1."""
    pk, st = ctx.pk, ctx.st
    b = player_base(pk, seat)
    here = st[b + P_SPACE]
    pool = pool_size(pk, st)  # counted once for the wants below
    if ready_to_fight(ctx, seat, pool):
        best, _d = _nearest(pk, st, pk.lay[L_GREEN], pk.scal[K_N_HENCHMEN], here, -1, 0)
        if best >= 0:
            return best
    if wants_intel(ctx, seat, pool):
        best, _d = _nearest(pk, st, pk.lay[L_INTEL], pk.scal[K_N_INTEL], here, -1, 0)
        if best >= 0:
            return best
    best, best_d = -1, 0
    for i in range(st[b + P_N_MISSIONS]):
        if st[b + P_FLIPPED + i]:
            continue
        s = pk.fate_city[st[b + P_MISSIONS + i]]
        d = pk.hop_distance[here, s]
        if best < 0 or d < best_d or (d == best_d and s < best):
            best, best_d = s, d
    return best


# --- movement ---------------------------------------------------------------------------------
@jit
def rest(ctx, seat):
    """Rest this turn (the player may: 2+ injuries, not on a regional space)?"""
    pk, st, sid, prm = ctx.pk, ctx.st, ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return coin(ctx)
    b = player_base(pk, seat)
    return st[b + P_LIFE] - st[b + P_INJ] <= prm[seat, H_REST_MARGIN]


@jit
def nearest_city(pk, here):
    """The city nearest ``here`` (lowest id on ties): where a heuristic with no target heads."""
    dist = pk.hop_distance
    best, bd = -1, -1
    for s in range(pk.scal[K_N_CITIES]):
        if best < 0 or dist[here, s] < bd:
            best, bd = s, dist[here, s]
    return best


@jit
def _better(a, cost, means, dest, k0, k1, k2, k3):
    """The heuristic's move key (distance, cost, means, destination), lexicographic."""
    return a < k0 or (
        a == k0 and (cost < k1 or (cost == k1 and (means < k2 or (means == k2 and dest < k3))))
    )


@jit
def heuristic_move(ctx, seat, gift):
    """The heuristic's move ``(dest, means, resolve)``, found without listing the legal moves.

    The one statement of its move rule in the kernel (twin of
    ``HeuristicStrategy.move``): the best move by the key (distance to the target,
    cost, means, destination), where a paid move (Resolve, UN Transport) counts only
    if it reaches the target and no free move does. The list holds a few free moves
    (stay, walk, plane) and up to ~200 paid ones, so this needs only the best free
    move, whether a free move reaches the target, and the cheapest paid move to it.
    ``gift``: a UN Transport gift is on offer (no own token, another seat gives one).
    Means -1 where no move qualifies: the heuristic then takes the first legal move.
    """
    pk, st, prm = ctx.pk, ctx.st, ctx.prm
    b = player_base(pk, seat)
    here = st[b + P_SPACE]
    dist = pk.hop_distance
    regional = pk.space_kind[here] == codes.REGIONAL
    tgt = target(ctx, seat)
    if tgt < 0:
        if not regional:
            return here, codes.M_STAY, 0
        tgt = nearest_city(pk, here)
    can_resolve = st[b + P_RESOLVE] > 0 and st[S_MOVE_RES] == 0
    may = prm[seat, H_MOVE_RESOLVE] != 0 and may_spend(ctx, seat, False)
    un_ok = dist[here, tgt] >= prm[seat, H_UN_MIN_DIST]
    # free moves: the best key, and whether one reaches the target
    found, free_reach = False, False
    k0 = k2 = k3 = 0
    if not regional:
        found, k0, k2, k3 = True, dist[here, tgt], codes.M_STAY, here
        free_reach = here == tgt
    # the walks: the best free one and whether a free or a Resolve walk reaches the target are
    # static tables of the map (pk.walk_best, pk.walk_to), the same as scanning the walk list
    extra = extra_mp(pk, st, seat)  # an extra_move status card: one more free MP
    free = codes.BASE_MP + extra
    mp = pk.walk_to[here, tgt]
    walk_res = can_resolve and mp == free + 1  # a Resolve walk reaches the target
    free_reach = free_reach or 0 < mp <= free
    dest = pk.walk_best[extra, here, tgt]
    if dest >= 0:
        a = dist[dest, tgt]
        if not found or _better(a, 0, codes.M_WALK, dest, k0, 0, k2, k3):
            found, k0, k2, k3 = True, a, codes.M_WALK, dest
    plane_res = False  # a plane + Resolve reaches the target
    if airport_open(pk, st, here):
        order = pk.airports_by_distance
        for i in range(order.shape[1]):  # the open airport nearest the target (lowest id on ties)
            a = order[tgt, i]
            if a != here and airport_open(pk, st, a):
                free_reach = free_reach or a == tgt
                d = dist[a, tgt]
                if not found or _better(d, 0, codes.M_PLANE, a, k0, 0, k2, k3):
                    found, k0, k2, k3 = True, d, codes.M_PLANE, a
                break
        if can_resolve:
            for k in range(pk.airports_near_start[tgt], pk.airports_near_start[tgt + 1]):
                a = pk.airports_near[k]
                if a != here and airport_open(pk, st, a):
                    plane_res = True
                    break
    if free_reach:
        return k3, k2, 0
    # the cheapest paid move to the target (by cost, then means), if it beats the best free one
    pc, pm = -1, -1
    if may and walk_res:
        pc, pm = 1, codes.M_WALK
    elif may and plane_res:
        pc, pm = 1, codes.M_PLANE
    elif un_ok and tgt != here and pk.space_kind[tgt] != codes.REGIONAL:
        if st[b + P_UN] > 0:
            pc, pm = 2, codes.M_UN
        elif gift:
            pc, pm = 2, codes.M_UN_GIFT
        if pm < 0 and top_secret_card(pk, st, seat, codes.TS_UN_TRANSPORT) >= 0:
            pc, pm = 3, codes.M_TOP_SECRET_UN
    if pm >= 0 and (not found or _better(dist[tgt, tgt], pc, pm, tgt, k0, 0, k2, k3)):
        return tgt, pm, 1 if pc == 1 else 0
    if not found:
        return -1, -1, -1
    return k3, k2, 0


@jit
def direct_move(ctx, seat, gift):
    """The move ``(dest, means, resolve)`` if the strategy finds it without the list, else means -1."""
    sid = ctx.sid[seat]
    if sid == RANDOM:
        return -1, -1, -1
    return heuristic_move(ctx, seat, gift)


@jit
def list_the_moves(ctx, seat, gift):
    """``direct_move`` where ``move`` is replaced (sim.kernel.custom): always list the moves."""
    return -1, -1, -1


@jit
def move(ctx, seat, moves, n):
    """Index of the chosen move among ``moves[:n]`` (rows: dest, means, resolve, steps), or -1."""
    rs, sid = ctx.rs, ctx.sid[seat]
    if sid == RANDOM:
        return next_below_nb(rs, STRATEGY, n)
    gift = False
    for i in range(n):
        if moves[i, 1] == codes.M_UN_GIFT:
            gift = True
            break
    dest, means, res = heuristic_move(ctx, seat, gift)
    if means < 0:
        return 0
    for i in range(n):
        if moves[i, 0] == dest and moves[i, 1] == means and moves[i, 2] == res:
            return i
    return -1


# --- encounters ------------------------------------------------------------------------------
@jit
def token(ctx, seat, choices, n):
    """Index into ``choices[:n]`` (TokenChoice codes)."""
    pk, st, rs, sid, prm = ctx.pk, ctx.st, ctx.rs, ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return next_below_nb(rs, STRATEGY, n)
    pool = pool_size(pk, st)  # counted once for the three wants below
    for i in range(n):
        if choices[i] == codes.T_HENCHMAN and ready_to_fight(ctx, seat, pool):
            return i
    for i in range(n):
        if choices[i] == codes.T_EXCHANGE and wants_exchange(ctx, seat, pool):
            return i
    for i in range(n):
        if choices[i] == codes.T_POOL and pool < prm[seat, H_POOL_TARGET]:
            return i
    return 0


@jit
def test_option(ctx, seat, opts, n):
    """Index into ``opts[:n]`` (rows: skill, modifier, successes, gamble)."""
    pk, st, rs, sid, prm = ctx.pk, ctx.st, ctx.rs, ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return next_below_nb(rs, STRATEGY, n)
    b = player_base(pk, seat)
    best, best_s = 0, 0.0
    for i in range(n):
        if opts[i, 3]:
            s = prm[seat, H_GAMBLE_P]
        else:
            s = p_pass(ctx, seat, st[b + P_SKILLS + opts[i, 0]] + opts[i, 1] + status_bonus(pk, st, seat, opts[i, 0]),
                       opts[i, 2])
        if i == 0 or s > best_s:
            best, best_s = i, s
    return best


@jit
def mission_reward(ctx, seat, opts, n):
    """Index into ``opts[:n]`` (rows: Reward kind, skill)."""
    pk, st, rs, sid, prm = ctx.pk, ctx.st, ctx.rs, ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return next_below_nb(rs, STRATEGY, n)
    for i in range(n):  # a negative status card with a lasting effect goes first
        if opts[i, 0] == codes.R_DISCARD_STATUS:
            e = pk.status_effect[opts[i, 1]]
            if e == codes.SE_SKILL_MODIFIER or e == codes.SE_LOSE_TURN:
                return i
    want = int(prm[seat, H_MISSION_REWARD])
    b = player_base(pk, seat)
    for r in range(5):
        if r == 0:
            kind = want
        else:
            kind = r - 1
            if kind == want:
                continue
            if kind > 3:
                break
        best = -1
        for i in range(n):
            if opts[i, 0] != kind:
                continue
            if kind != codes.R_SKILL:
                return i
            if best < 0 or st[b + P_SKILLS + opts[i, 1]] > st[b + P_SKILLS + opts[best, 1]]:
                best = i
        if best >= 0:
            return best
    return 0


@jit
def _extreme_skill(ctx, seat, skills, n, sign):
    """Index into ``skills[:n]`` of the highest basic skill (``sign`` 1) or the lowest (-1), first on ties."""
    pk, st, rs, sid = ctx.pk, ctx.st, ctx.rs, ctx.sid[seat]
    if sid == RANDOM:
        return next_below_nb(rs, STRATEGY, n)
    b = player_base(pk, seat)
    best = 0
    for i in range(1, n):
        if sign * st[b + P_SKILLS + skills[i]] > sign * st[b + P_SKILLS + skills[best]]:
            best = i
    return best


@jit
def skill_up(ctx, seat, skills, n):
    """Index into ``skills[:n]`` of the basic skill to raise by 1 (the strongest, first on ties)."""
    return _extreme_skill(ctx, seat, skills, n, 1)


@jit
def skill_down(ctx, seat, skills, n):
    """Index into ``skills[:n]`` of the basic skill to lower by 1 (the weakest, lowest code on ties)."""
    return _extreme_skill(ctx, seat, skills, n, -1)


@jit
def status_top_secret(ctx, seat):
    """A positive status card with no copy left: a Top Secret card (True) or 1 Resolve (False)?"""
    pk, st, sid, prm = ctx.pk, ctx.st, ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return coin(ctx)
    b = player_base(pk, seat)
    r = st[b + P_RESOLVE]
    return not (r < st[b + P_RESOLVE_MAX] and r <= prm[seat, H_RESERVE])


@jit
def advanced_skill(ctx, seat, skills, n):
    """Index into ``skills[:n]`` of the advanced skill to take."""
    pk, rs, sid = ctx.pk, ctx.rs, ctx.sid[seat]
    if sid == RANDOM:
        return next_below_nb(rs, STRATEGY, n)
    best = 0
    for i in range(1, n):
        if pk.autopass_counts[skills[i]] > pk.autopass_counts[skills[best]]:
            best = i
    return best


# --- start of turn ---------------------------------------------------------------------------
@jit
def heal_all(ctx, seat):
    """Play the Top Secret card that heals every injury?"""
    pk, st, sid, prm = ctx.pk, ctx.st, ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return coin(ctx)
    b = player_base(pk, seat)
    return st[b + P_LIFE] - st[b + P_INJ] <= prm[seat, H_REST_MARGIN] + 1


@jit
def intel_to_pool(ctx, seat):
    """Play the Top Secret card that puts 1 Intel from the supply into the Pool?"""
    sid = ctx.sid[seat]
    if sid == RANDOM:
        return coin(ctx)
    return True


@jit
def use_watch(ctx, seat):
    """Use Dexter's Watch to look at the top villain card?"""
    sid, prm = ctx.sid[seat], ctx.prm
    if sid == RANDOM:
        return coin(ctx)
    return prm[seat, H_WATCH_FAIL] != 0
