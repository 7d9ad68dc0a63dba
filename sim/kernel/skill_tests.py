"""Kernel twin of ``sim.rules.skill_tests``: blind dice draws, the Yellow die, Resolve.

A test is passed as ints: ``successes`` needed, ``allowed`` dice, ``henchman``
(-1 unless a henchman test), ``level`` and ``no_advance`` (the reference's
:class:`~sim.rules.choices.Test`).
"""

from __future__ import annotations

from sim.content import constants as codes
from sim.jit import KERNEL_OPTIONS, njit
from sim.kernel import strategy as decide
from sim.kernel.decks import play_top_secret, player_base, status_bonus, top_secret_card, work
from sim.kernel.gamble import gamble
from sim.kernel.layout import (
    K_ALWAYS_DIE,
    K_N_BAG,
    L_W_BAG,
    L_W_DICE,
    L_W_FACES,
    P_RESOLVE,
    P_SKILLS,
    S_DICE_RES,
    S_OUTCOME,
    ST_RESOLVE_SPENT,
    ST_TESTS_ATTEMPTED,
    ST_TESTS_PASSED,
)
from sim.kernel.villain import heal, take_injuries
from sim.rng import DICE, next_below_nb

jit = njit(**KERNEL_OPTIONS)
inline_jit = njit(inline="always", **KERNEL_OPTIONS)


@inline_jit
def die_face(pk, die, face):
    """(successes, injuries less heals) a die shows on a face."""
    return pk.die_success[die, face], pk.die_injury[die, face] - pk.die_heal[die, face]


@jit
def dice_test(ctx, seat, successes, allowed, henchman, no_advance):
    """Draw dice one at a time (the player may stop), roll them with Yellow, maybe reroll."""
    pk, st, rs = ctx.pk, ctx.st, ctx.rs
    b = player_base(pk, seat)
    n_bag = pk.scal[K_N_BAG]
    bag = work(pk, st, L_W_BAG)
    for i in range(n_bag):
        bag[i] = pk.bag_dice[i]
    dice = work(pk, st, L_W_DICE)
    faces = work(pk, st, L_W_FACES)
    nd = 0
    while True:
        if nd < allowed and n_bag > 0:
            if not decide.draw_die(ctx, seat, successes, henchman, no_advance, nd):
                break
            j = next_below_nb(rs, DICE, n_bag)
            dice[nd] = bag[j]
            nd += 1
            bag[j] = bag[n_bag - 1]
            n_bag -= 1
            continue
        if (
            n_bag > 0
            and allowed >= nd
            and allowed >= 0
            and st[b + P_RESOLVE] > 0
            and st[S_DICE_RES] == 0
            and decide.resolve_plus_one(ctx, seat, henchman, no_advance, nd)
        ):
            st[b + P_RESOLVE] -= 1
            st[S_DICE_RES] = 1
            st[ST_RESOLVE_SPENT] += 1
            allowed += 1
            continue
        break
    dice[nd] = pk.scal[K_ALWAYS_DIE]
    n = nd + 1
    # the dice are counted as they are rolled (a loop of its own over a handful of dice was
    # vectorized, with a 64-bit vector multiply for each table index)
    succ = 0
    hurt = 0
    for i in range(n):
        f = next_below_nb(rs, DICE, 6)
        faces[i] = f
        s, h = die_face(pk, dice[i], f)
        succ += s
        hurt += h
    if st[b + P_RESOLVE] > 0 and st[S_DICE_RES] == 0:
        k = decide.reroll(ctx, seat, successes, henchman, no_advance, dice, faces, n)
        if k >= 0:
            if k >= n:
                raise ValueError("strategy chose to reroll a die that was not rolled")
            st[b + P_RESOLVE] -= 1
            st[S_DICE_RES] = 1
            st[ST_RESOLVE_SPENT] += 1
            s0, h0 = die_face(pk, dice[k], faces[k])
            faces[k] = next_below_nb(rs, DICE, 6)
            s, h = die_face(pk, dice[k], faces[k])
            succ += s - s0
            hurt += h - h0
    passed = succ >= successes
    # injuries and heals apply whether the test passes or fails (they cancel each other)
    if hurt > 0:
        take_injuries(ctx, seat, hurt)
    elif hurt < 0:
        heal(pk, st, seat, -hurt)
    return passed


@jit
def run_test(
    ctx, seat, skill, modifier, successes, gamble_option, henchman, level, no_advance,
):
    """Resolve one skill-test option (or a Gamble), offering the Top Secret cards for tests.

    Returns True if passed; when the game ends inside the test the result is
    meaningless and ``st[S_OUTCOME]`` is set (the reference raises there).
    """
    pk, st = ctx.pk, ctx.st
    st[ST_TESTS_ATTEMPTED] += 1
    if gamble_option:
        passed = gamble(ctx, seat)
    else:
        allowed = st[player_base(pk, seat) + P_SKILLS + skill] + modifier + status_bonus(pk, st, seat, skill)
        ts = top_secret_card(pk, st, seat, codes.TS_AUTO_PASS)
        if (
            ts >= 0
            and level != 3
            and decide.play_auto_pass(ctx, seat, allowed, successes, henchman)
        ):
            play_top_secret(pk, st, seat, ts)
            passed = True
        else:
            ts = top_secret_card(pk, st, seat, codes.TS_TWO_DICE)
            if ts >= 0 and decide.play_two_dice(ctx, seat, allowed, henchman):
                play_top_secret(pk, st, seat, ts)
                allowed += 2
            passed = dice_test(ctx, seat, successes, allowed, henchman, no_advance)
            if st[S_OUTCOME] >= 0:
                return passed
    if passed:
        st[ST_TESTS_PASSED] += 1
    return passed
