"""Kernel twin of ``sim.rules.encounters``: mission flips, tokens, henchman tests, encounter cards."""

from __future__ import annotations

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel import strategy as decide
from sim.kernel.decks import (  # noqa: F401  (the reward helpers live in decks, named as in rules)
    count_at,
    discard,
    draw_card,
    draw_token,
    draw_top_secret,
    first_at,
    gain_resolve,
    gain_un,
    held_status_add,
    pick_on_space,
    player_base,
    raise_skill,
    skill_max,
    status_holds_kind,
    take_advanced,
    work,
)
from sim.kernel.endgame import check_henchmen, check_location
from sim.kernel.layout import (
    K_FLIP_ANYWHERE,
    K_HENCHMAN_CONSEQ_IN_ENC,
    K_LOST_INTEL_SUPPLY,
    K_N_ADV_TOKENS,
    K_N_HENCHMEN,
    K_N_INTEL,
    K_N_STATUS,
    K_STATUS_NEG_LOWER,
    L_ECAP,
    L_FACEUP,
    L_FATE,
    L_FCAP,
    L_GREEN,
    L_HLEVEL,
    L_INTEL,
    L_STATUS,
    L_W_CHOICES,
    L_W_EFFECT,
    L_W_GREENS,
    L_W_OPTS,
    N_ADV,
    N_SKILLS,
    P_ADV,
    P_CHAR,
    P_RESOLVE,
    P_RESOLVE_MAX,
    P_SKILLS,
    P_SPACE,
    S_ADV_HELD,
    S_LOC_TRACK,
    S_OUTCOME,
    ST_CARD_HENCHMAN_PASSED,
    ST_CARD_HENCHMAN_TESTS,
    ST_HENCHMAN_PASSED,
    ST_HENCHMAN_TESTS,
    ST_TESTS_ATTEMPTED,
    ST_TESTS_PASSED,
)
from sim.kernel.missions import flip_missions, work_rows
from sim.kernel.skill_tests import run_test
from sim.kernel.villain import take_injuries, v_minus_1, villain_advancement
from sim.rng import ENCOUNTER, FATE, STATUS, TOKENS, next_below_nb

jit = njit(**KERNEL_OPTIONS)


# --- the encounter phase ----------------------------------------------------------------------
@jit
def token_choices(pk, st, seat, out):
    """What the player may do with the tokens on their space (TokenChoice codes); returns count."""
    space = st[player_base(pk, seat) + P_SPACE]
    n_h, n_i = pk.scal[K_N_HENCHMEN], pk.scal[K_N_INTEL]
    out[0] = codes.T_NO_INTEL
    n = 1
    if first_at(st, pk.lay[L_GREEN], n_h, space) >= 0:
        out[n] = codes.T_HENCHMAN
        n += 1
    # counted, not searched: the count has no branch per token (where the search stops follows
    # the board and mispredicts) and LLVM vectorizes it
    if count_at(st, pk.lay[L_INTEL], n_i, space) > 0:
        out[n] = codes.T_POOL
        n += 1
        if first_at(st, pk.lay[L_GREEN], n_h, codes.SUPPLY) >= 0:
            out[n] = codes.T_EXCHANGE
            n += 1
    return n


@jit
def encounter_phase(ctx, seat):
    """Flip secret missions, then resolve exactly one token or a No Intel encounter."""
    pk, st = ctx.pk, ctx.st
    flip_missions(pk, st, seat)
    choices = work(pk, st, L_W_CHOICES)
    n = token_choices(pk, st, seat, choices)
    choice = codes.T_NO_INTEL
    if n > 1:
        i = decide.token(ctx, seat, choices, n)
        if i < 0 or i >= n:
            raise ValueError("strategy chose an illegal token option")
        choice = choices[i]
    space = st[player_base(pk, seat) + P_SPACE]
    n_h, n_i = pk.scal[K_N_HENCHMEN], pk.scal[K_N_INTEL]
    if choice == codes.T_HENCHMAN:
        henchman_encounter(ctx, seat, pick_on_space(st, pk.lay[L_GREEN], n_h, space, ctx.rs))
    elif choice == codes.T_POOL:
        st[pk.lay[L_INTEL] + pick_on_space(st, pk.lay[L_INTEL], n_i, space, ctx.rs)] = codes.POOL
        encounter_card(ctx, seat, codes.WITH_INTEL)
    elif choice == codes.T_EXCHANGE:
        exchange_intel(ctx, pick_on_space(st, pk.lay[L_INTEL], n_i, space, ctx.rs))
        encounter_card(ctx, seat, codes.WITH_INTEL)
    else:
        encounter_card(ctx, seat, codes.NO_INTEL)


@jit
def exchange_intel(ctx, tok):
    """Yellow token back to the supply; a face-down green token goes to a Fate-drawn city."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    st[pk.lay[L_INTEL] + tok] = codes.SUPPLY
    green = draw_token(st, pk.lay[L_GREEN], pk.scal[K_N_HENCHMEN], codes.SUPPLY, rs)
    if green < 0:
        raise RuntimeError("exchange offered with an empty green supply")
    card = draw_card(st, pk.lay[L_FATE], pk.lay[L_FCAP], rs, FATE)
    if card < 0:
        raise RuntimeError("Fate deck exhausted")
    discard(st, pk.lay[L_FATE], pk.lay[L_FCAP], card)
    st[pk.lay[L_GREEN] + green] = pk.fate_city[card]


@jit
def _choose_option(ctx, seat, opts, n):
    """The strategy's test option among ``opts[:n]`` (no question when there is one)."""
    if n == 1:
        return 0
    i = decide.test_option(ctx, seat, opts, n)
    if i < 0 or i >= n:
        raise ValueError("strategy chose an illegal test option")
    return i


@jit
def henchman_encounter(ctx, seat, tok):
    """Reveal the Location token and test its henchman at his current level.

    On a pass the Location Track advances first (the game may end there), then the
    henchman levels up or, at level 3, is defeated (Field Manual, 2.3).
    """
    pk, st = ctx.pk, ctx.st
    h = tok  # Location token t belongs to henchman t
    level = st[pk.lay[L_HLEVEL] + h]
    st[ST_HENCHMAN_TESTS] += 1
    st[pk.lay[L_GREEN] + tok] = codes.SUPPLY  # the token leaves the board whatever happens
    passed = henchman_test(ctx, seat, h, False)
    if st[S_OUTCOME] >= 0:
        return
    if not passed:
        villain_advancement(ctx)
        if st[S_OUTCOME] >= 0:
            return
        henchman_consequence(ctx, seat, h, level, False)
        return
    st[ST_HENCHMAN_PASSED] += 1
    st[S_LOC_TRACK] += 1
    check_location(pk, st)
    if st[S_OUTCOME] >= 0:
        return
    henchman_level_up(ctx, h, False)
    if st[S_OUTCOME] >= 0:
        return
    henchman_consequence(ctx, seat, h, level, True)


@jit
def henchman_consequence(ctx, seat, h, level, passed):
    """The pass or fail consequence printed on the henchman's card for the level tested."""
    pk = ctx.pk
    if passed:
        apply_effect(ctx, seat, pk.henchman_reward[h, level - 1], pk.henchman_reward_amount[h, level - 1],
                     pk.henchman_reward_skill[h, level - 1])
    else:
        apply_effect(ctx, seat, pk.henchman_penalty[h, level - 1], pk.henchman_penalty_amount[h, level - 1],
                     pk.henchman_penalty_skill[h, level - 1])


@jit
def henchman_test(ctx, seat, h, no_advance):
    """The test printed on a henchman's card for his current level (his auto-pass skill included)."""
    pk, st = ctx.pk, ctx.st
    level = st[pk.lay[L_HLEVEL] + h]
    b = player_base(pk, seat)
    auto = pk.henchman_autopass[h, level - 1]
    if auto >= 0 and st[b + P_ADV + auto] and decide.use_auto_pass(ctx, seat, auto, h, no_advance):
        st[ST_TESTS_ATTEMPTED] += 1
        st[ST_TESTS_PASSED] += 1
        return True
    opts = work_rows(pk, st, L_W_OPTS, codes.MAX_OPTIONS, 4)
    opts[:] = 0
    n = 0
    for i in range(codes.MAX_OPTIONS):
        if pk.henchman_option_skill[h, level - 1, i] >= 0:
            opts[n, 0] = pk.henchman_option_skill[h, level - 1, i]
            opts[n, 1] = pk.henchman_option_modifier[h, level - 1, i]
            opts[n, 2] = pk.henchman_option_successes[h, level - 1, i]
            n += 1
    i = _choose_option(ctx, seat, opts, n)
    return run_test(ctx, seat, opts[i, 0], opts[i, 1], opts[i, 2], False, h, level, no_advance)


@jit
def henchman_level_up(ctx, h, reshuffle):
    """A passed henchman test: level up, or at level 3 defeat (FAQ 8 reshuffle inside an encounter card)."""
    pk, st = ctx.pk, ctx.st
    hl = pk.lay[L_HLEVEL] + h
    level = st[hl]
    if level < 3:
        st[hl] = level + 1
        return
    st[hl] = codes.DEFEATED
    if reshuffle:
        reshuffle_locations(ctx, h)
    st[pk.lay[L_GREEN] + h] = codes.REMOVED
    check_henchmen(pk, st)


@jit
def reshuffle_locations(ctx, h):
    """FAQ 8: take henchman ``h``'s token out and deal the other board tokens anew onto their places."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    off, n_h = pk.lay[L_GREEN], pk.scal[K_N_HENCHMEN]
    greens = work(pk, st, L_W_GREENS)
    tokens, places = greens[:n_h], greens[n_h:]
    n = 0
    for t in range(n_h):
        if st[off + t] >= 0 and t != h:
            tokens[n] = t
            n += 1
    st[off + h] = codes.REMOVED
    # the places are the tokens' own, read in the same ascending order before any is dealt
    for k in range(n):
        places[k] = st[off + tokens[k]]
    left = n
    for k in range(n):
        j = next_below_nb(rs, TOKENS, left) if left > 1 else 0
        st[off + tokens[j]] = places[k]
        tokens[j] = tokens[left - 1]
        left -= 1


@jit
def encounter_card(ctx, seat, side):
    """Draw from the space's continent deck (ocean deck at sea) and resolve one side."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    b = player_base(pk, seat)
    deck = pk.space_deck[st[b + P_SPACE]]
    base, cap = pk.deck_base[deck], pk.lay[L_ECAP]
    card = draw_card(st, base, cap, rs, ENCOUNTER + deck)
    if card < 0:
        raise RuntimeError("an encounter deck is empty")
    discard(st, base, cap, card)
    no_advance = pk.encounter_no_advance[card, side] != 0
    auto = pk.encounter_autopass[card, side]
    h = pk.encounter_henchman[card, side]
    level = st[pk.lay[L_HLEVEL] + h] if h >= 0 else 0
    henchman_card = h >= 0 and level != codes.DEFEATED
    if henchman_card:
        # FAQ 6: a test against the henchman; a pass levels him up, the Location Track stays
        st[ST_CARD_HENCHMAN_TESTS] += 1
        passed = henchman_test(ctx, seat, h, no_advance)
        if st[S_OUTCOME] >= 0:
            return
        if passed:
            st[ST_CARD_HENCHMAN_PASSED] += 1
            henchman_level_up(ctx, h, True)
            if st[S_OUTCOME] >= 0:
                return
    elif auto >= 0 and st[b + P_ADV + auto] and decide.use_auto_pass(ctx, seat, auto, -1, no_advance):
        st[ST_TESTS_ATTEMPTED] += 1
        st[ST_TESTS_PASSED] += 1
        passed = True
    else:
        opts = work_rows(pk, st, L_W_OPTS, codes.MAX_OPTIONS + 1, 4)
        opts[:] = 0
        n = 0
        for i in range(codes.MAX_OPTIONS):
            if pk.encounter_option_skill[card, side, i] >= 0:
                opts[n, 0] = pk.encounter_option_skill[card, side, i]
                opts[n, 1] = pk.encounter_option_modifier[card, side, i]
                opts[n, 2] = pk.encounter_option_successes[card, side, i]
                n += 1
        if pk.encounter_gamble[card, side]:
            opts[n, 0] = -1
            opts[n, 2] = 1
            opts[n, 3] = 1
            n += 1
        i = _choose_option(ctx, seat, opts, n)
        passed = run_test(ctx, seat, opts[i, 0], opts[i, 1], opts[i, 2], opts[i, 3] != 0, -1, 0, no_advance)
        if st[S_OUTCOME] >= 0:
            return
    # the henchman card's own consequence too? (henchmen.toml [readings] consequences_in_encounters)
    henchman_too = henchman_card and pk.scal[K_HENCHMAN_CONSEQ_IN_ENC] != 0
    if passed:
        if henchman_too:
            henchman_consequence(ctx, seat, h, level, True)
            if st[S_OUTCOME] >= 0:
                return
        apply_effect(
            ctx, seat, pk.encounter_reward[card, side], pk.encounter_reward_amount[card, side],
            pk.encounter_reward_skill[card, side],
        )
    else:
        if not no_advance:
            villain_advancement(ctx)
            if st[S_OUTCOME] >= 0:
                return
        if henchman_too:
            henchman_consequence(ctx, seat, h, level, False)
            if st[S_OUTCOME] >= 0:
                return
        apply_effect(
            ctx, seat, pk.encounter_penalty[card, side], pk.encounter_penalty_amount[card, side],
            pk.encounter_penalty_skill[card, side],
        )


@jit
def advanced_available(ctx, skill):
    """A token of this advanced skill is left: fewer players hold it than the pack has tokens."""
    pk, st = ctx.pk, ctx.st
    return st[S_ADV_HELD + skill] < pk.scal[K_N_ADV_TOKENS]


@jit
def flip_up(ctx, amount, first, second, third):
    """Flip up to ``amount`` face-down Intel tokens face up: each from the first place that has one.

    A place is POOL, SUPPLY or 0 for the map (any space); a place may repeat.
    """
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    off, up, n_i = pk.lay[L_INTEL], pk.lay[L_FACEUP], pk.scal[K_N_INTEL]
    for _ in range(amount):
        for k in range(3):
            where = first if k == 0 else second if k == 1 else third
            n = 0
            for t in range(n_i):
                loc = st[off + t]
                if st[up + t] == 0 and (loc == where if where < 0 else loc >= 0):
                    n += 1
            if n == 0:
                continue
            j = next_below_nb(rs, TOKENS, n)
            for t in range(n_i):
                loc = st[off + t]
                if st[up + t] == 0 and (loc == where if where < 0 else loc >= 0):
                    if j == 0:
                        st[up + t] = 1
                        break
                    j -= 1
            break


@jit
def change_any_skill(ctx, seat, step):
    """The player raises (``step`` 1, below the mat's maximum) or lowers (-1, above its minimum) a basic
    skill of their choice by 1 ("Up Any Skill", "lower any skill"); no such skill: nothing."""
    pk, st = ctx.pk, ctx.st
    b = player_base(pk, seat)
    lo, hi = pk.character_skill_min[st[b + P_CHAR]], skill_max(pk, st, seat)
    options = work(pk, st, L_W_EFFECT)[:N_SKILLS]
    n = 0
    for s in range(N_SKILLS):
        v = st[b + P_SKILLS + s]
        if (v < hi) if step > 0 else (v > lo):
            options[n] = s
            n += 1
    if n:
        i = decide.skill_up(ctx, seat, options, n) if step > 0 else decide.skill_down(ctx, seat, options, n)
        if i < 0 or i >= n:
            raise ValueError("strategy chose an illegal skill to raise or lower")
        raise_skill(pk, st, seat, options[i], step)


@jit
def lower_any_skill(ctx, seat):
    """The player lowers a basic skill of their choice by 1 (none above the mat's minimum: nothing)."""
    change_any_skill(ctx, seat, -1)


@jit
def take_status(pk, st, seat, card):
    """The seat takes status card ``card`` from the deck; a resolve card acts as it is gained."""
    o = pk.lay[L_STATUS]
    if st[o + card] >= 0:  # (from another seat: never in the rules as read, but counted right)
        held_status_add(pk, st, st[o + card], card, -1)
    st[o + card] = seat
    held_status_add(pk, st, seat, card, 1)
    kind = pk.status_type[card]
    if pk.status_effect[kind] == codes.SE_RESOLVE:
        b = player_base(pk, seat)
        st[b + P_RESOLVE] = max(0, min(st[b + P_RESOLVE_MAX], st[b + P_RESOLVE] + pk.status_amount[kind]))


@jit
def status_unavailable(ctx, seat, polarity):
    """No copy to deal (FAQ 2): positive, a Top Secret card or 1 Resolve; negative, lower any skill."""
    pk, st = ctx.pk, ctx.st
    if polarity == codes.POSITIVE or (polarity == codes.NEGATIVE and pk.scal[K_STATUS_NEG_LOWER] == 0):
        if decide.status_top_secret(ctx, seat):
            draw_top_secret(ctx, seat)
        else:
            gain_resolve(pk, st, seat, 1)
    elif polarity == codes.NEGATIVE:
        lower_any_skill(ctx, seat)


@jit
def gain_status(ctx, seat, kind):
    """Deal the named status card (its lowest-id copy in the deck) to the seat."""
    pk, st = ctx.pk, ctx.st
    polarity = pk.status_polarity[kind]
    if polarity == codes.THIRD_PERSON and status_holds_kind(pk, st, seat, kind):
        return
    o = pk.lay[L_STATUS]
    for card in range(pk.scal[K_N_STATUS]):
        if st[o + card] == -1 and pk.status_type[card] == kind:
            take_status(pk, st, seat, card)
            return
    status_unavailable(ctx, seat, polarity)


@jit
def _random_status_ok(pk, st, seat, card, negative):
    """A card in the deck a random deal may give (``sim.rules.encounters.gain_random_status``)."""
    if st[pk.lay[L_STATUS] + card] != -1:
        return False
    kind = pk.status_type[card]
    pol = pk.status_polarity[kind]
    if negative:
        return pol == codes.NEGATIVE
    return pol == codes.POSITIVE or (pol == codes.THIRD_PERSON and not status_holds_kind(pk, st, seat, kind))


@jit
def gain_random_status(ctx, seat, negative):
    """A random status card from the deck: negative (penalty), else not negative (reward)."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    n_s = pk.scal[K_N_STATUS]
    count = 0
    for card in range(n_s):
        if _random_status_ok(pk, st, seat, card, negative):
            count += 1
    if count == 0:
        status_unavailable(ctx, seat, codes.NEGATIVE if negative else codes.POSITIVE)
        return
    r = next_below_nb(rs, STATUS, count)
    for card in range(n_s):
        if _random_status_ok(pk, st, seat, card, negative):
            if r == 0:
                take_status(pk, st, seat, card)
                return
            r -= 1


@jit
def apply_effect(ctx, seat, effect, amount, skill):
    """One reward or penalty of the Appendix."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    if effect == codes.E_NONE:
        return
    b = player_base(pk, seat)
    off, n_i = pk.lay[L_INTEL], pk.scal[K_N_INTEL]
    if effect == codes.E_GAIN_INTEL:
        for _ in range(amount):
            t = draw_token(st, off, n_i, codes.SUPPLY, rs)
            if t < 0:
                break  # supply empty: out of luck (FAQ 1)
            st[off + t] = codes.POOL
    elif effect == codes.E_TOP_SECRET:
        draw_top_secret(ctx, seat)
    elif effect == codes.E_GAIN_RESOLVE:
        gain_resolve(pk, st, seat, amount)
    elif effect == codes.E_UP_ANY_SKILL:
        change_any_skill(ctx, seat, 1)
    elif effect == codes.E_UP_SKILL:
        raise_skill(pk, st, seat, skill, 1)
    elif effect == codes.E_UN_TRANSPORT:
        gain_un(pk, st, seat)
    elif effect == codes.E_ADVANCED_SKILL:
        options = work(pk, st, L_W_EFFECT)[:N_ADV]
        n = 0
        for s in range(N_ADV):
            if not st[b + P_ADV + s] and advanced_available(ctx, s):
                options[n] = s
                n += 1
        if n:
            i = decide.advanced_skill(ctx, seat, options, n)
            if i < 0 or i >= n:
                raise ValueError("strategy chose an illegal advanced skill")
            take_advanced(pk, st, seat, options[i])
    elif effect == codes.E_NAMED_ADVANCED_SKILL:
        if not st[b + P_ADV + skill] and advanced_available(ctx, skill):  # "if available"
            take_advanced(pk, st, seat, skill)
    elif effect == codes.E_V_MINUS_1:
        v_minus_1(ctx)
    elif effect == codes.E_FLIP_POOL:
        flip_up(ctx, amount, codes.POOL, codes.POOL, codes.POOL)
    elif effect == codes.E_FLIP_ANYWHERE:
        if pk.scal[K_FLIP_ANYWHERE] == codes.FLIP_POOL_FIRST:
            flip_up(ctx, amount, codes.POOL, 0, codes.SUPPLY)
        else:
            flip_up(ctx, amount, 0, codes.POOL, codes.SUPPLY)
    elif effect == codes.E_LOSE_INTEL:
        # back to the supply, or out of the game (encounters.toml [readings] lost_intel)
        to = codes.SUPPLY if pk.scal[K_LOST_INTEL_SUPPLY] != 0 else codes.REMOVED
        for _ in range(amount):
            t = draw_token(st, off, n_i, codes.POOL, rs)
            if t < 0:
                break
            st[off + t] = to
    elif effect == codes.E_INJURIES:
        take_injuries(ctx, seat, amount)
    elif effect == codes.E_LOWER_SKILL:
        raise_skill(pk, st, seat, skill, -1)
    elif effect == codes.E_STATUS:
        gain_status(ctx, seat, skill)
    elif effect == codes.E_RANDOM_STATUS:
        gain_random_status(ctx, seat, False)
    elif effect == codes.E_RANDOM_NEGATIVE_STATUS:
        gain_random_status(ctx, seat, True)
    else:
        raise RuntimeError("unknown effect code")
