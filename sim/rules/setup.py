"""Game set-up by player count (field manual "Game Set-up" and "Set-Up By Number of Players").

Random draws in a fixed order: villain cards removed at random (VILLAIN stream),
Top Secret cards dealt to players (TOP_SECRET), secret missions in seat order then
the board Intel's Fate cities (FATE), the Intel tokens placed (TOKENS).
"""

from __future__ import annotations

import numpy as np

from sim.content import Content
from sim.content import constants as K
from sim.rng import FATE, SETUP, VILLAIN, Streams
from sim.rules.decks import draw_card, draw_token
from sim.rules.encounters import advanced_available, draw_top_secret, gain_un
from sim.rules.errors import RuleError, StrategyError, is_index, is_index_array, is_integer
from sim.rules.missions import deal_missions
from sim.rules.state import SUPPLY, Deck, GameState, Player, Settings
from sim.rules.villain import name


def villain_deck_for(g_rng: Streams, c: Content, players: int) -> tuple[list[int], list[int]]:
    """Villain cards in play and removed: Injury and -1 cards out for 1-2 players, 3 random +1 solo."""
    removed = []
    kept = []
    for card in range(len(c.villain_advance)):
        if c.setup_remove_injury_cards[players] and c.villain_injury[card]:
            removed.append(card)
        elif c.setup_remove_minus_one[players] and not c.villain_injury[card] and c.villain_advance[card] == -1:
            removed.append(card)
        else:
            kept.append(card)
    plus_one = [x for x in kept if not c.villain_injury[x] and c.villain_advance[x] == 1]
    for _ in range(int(c.setup_remove_random_plus_one[players])):
        if not plus_one:
            raise RuleError("setup.toml: more random +1 villain cards to remove than the deck holds")
        j = g_rng.below(len(plus_one), VILLAIN)
        card = plus_one[j]
        plus_one[j] = plus_one[-1]
        plus_one.pop()
        removed.append(card)
        kept.remove(card)
    return sorted(kept), sorted(removed)


def random_lineup(g_rng: Streams, c: Content, players: int) -> tuple[int, ...]:
    """A line-up drawn from the SETUP stream: distinct characters while they last, then repeats."""
    left: list[int] = []
    out = []
    for _ in range(players):
        if not left:
            left = list(range(len(c.character_names)))
        j = g_rng.below(len(left), SETUP)
        out.append(left[j])
        left[j] = left[-1]
        left.pop()
    return tuple(out)


def make_player(c: Content, s: Settings, seat: int, character: int) -> Player:
    cut_row = c.setup_resolve_cut_reduced if c.character_reduced_resolve_cut[character] else c.setup_resolve_cut
    return Player(
        seat=seat,
        character=character,
        space=int(c.character_start_space[character]),
        skills=[int(x) for x in c.character_skills[character]],
        resolve=max(0, int(c.character_resolve_start[character]) - int(cut_row[s.players])),
        resolve_max=int(c.character_resolve_max[character]),
        life=int(c.character_life[character]),
        advanced=[False] * len(K.ADVANCED_SKILLS),  # taken in setup_game (choose_advanced_skills)
        gives_un=bool(c.character_gives_un[character]),
    )


def deal_start_status(g: GameState, seat: int) -> None:
    """The status cards the character starts with (characters.toml start_status), in list order.

    Each is the lowest-id copy left in the status deck; none left: the character starts
    without it (no substitute at set-up). A resolve card acts as it is gained.
    """
    from sim.rules.encounters import take_status

    c = g.content
    for kind in c.character_start_status[g.players[seat].character]:
        if kind < 0:
            continue
        card = next((x for x, h in enumerate(g.status_holder) if h == -1 and c.status_type[x] == kind), -1)
        if card < 0:
            g.say(f"  {name(g, seat)}: no {c.status_names[kind]!r} status card left to start with")
            continue
        g.say(f"  {name(g, seat)} starts with a status card:")
        take_status(g, seat, card)


def choose_advanced_skills(g: GameState, seat: int) -> None:
    """Set-up step 2: the player picks as many advanced skills as the character's mat lists.

    Options: the character's ``advanced_choices`` whose tokens are not all taken. With
    ``fixed_skills`` the character takes its own skills instead, each while a token is left.
    """
    c = g.content
    p = g.players[seat]
    own = [s for s in range(len(K.ADVANCED_SKILLS)) if c.character_advanced[p.character, s]]
    if g.settings.fixed_skills:
        for s in own:
            if advanced_available(g, s):
                p.advanced[s] = True
    else:
        strat = g.strategy(seat)
        for _ in own:
            options = [s for s in range(len(K.ADVANCED_SKILLS))
                       if c.character_advanced_choices[p.character, s] and not p.advanced[s]
                       and advanced_available(g, s)]
            if not options:
                break
            i = strat.setup_advanced_skill(g.view(seat, "setup_advanced_skill"), options)
            if not is_index(i) or not 0 <= i < len(options):
                raise StrategyError(f"strategy {strat.name!r} chose advanced skill {i!r} of {len(options)} at set-up")
            p.advanced[options[int(i)]] = True
    g.say(f"  {name(g, seat)} {'takes' if g.settings.fixed_skills else 'picks'} advanced skills: "
          + (", ".join(K.ADVANCED_SKILLS[s] for s in range(len(K.ADVANCED_SKILLS)) if p.advanced[s]) or "none"))


def un_left(supply, promised, cap):
    """How many of a choice of extras may be UN Transports: ``cap``, and no more than the supply
    holds beyond the ``promised`` ones this seat is about to take (a token the supply lacks is
    not a choice: the item goes to Top Secret instead of being lost)."""
    return min(cap, max(0, supply - promised))


def choose_extras(g: GameState, seat: int, n: int, max_un: int) -> tuple[int, int]:
    """The player splits ``n`` extra items between UN Transports (at most max_un) and Top Secret."""
    strat = g.strategy(seat)
    k = strat.setup_extras(g.view(seat, "setup_extras"), n, max_un)
    if not is_index(k) or not 0 <= k <= min(n, max_un):
        raise StrategyError(f"strategy {strat.name!r} took {k!r} UN Transports of {n} (max {max_un})")
    return int(k), n - int(k)


def setup_game(c: Content, s: Settings, strategies: list, seed: int, game: int, trace: bool = False) -> GameState:
    """Lay out the table for one game."""
    n = s.players
    rng = Streams(seed, game)
    lineup = random_lineup(rng, c, n) if s.random_lineup else (s.characters or tuple(int(x) for x in c.setup_lineup[n] if x >= 0))
    villain_pile, villain_removed = villain_deck_for(rng, c, n)
    players = [make_player(c, s, seat, ch) for seat, ch in enumerate(lineup)]
    g = GameState(
        content=c,
        settings=s,
        players=players,
        lobo_start=int(c.dirty_lobo_start) if s.dirty_lobo else int(c.lobo_start),
        location_target=int(c.setup_location_target[n]) + (int(c.dirty_location_delta) if s.dirty_location else 0),
        overflow_limit=int(c.setup_overflow_limit[n]),
        henchman_level=[1] * len(c.henchman_names),
        green_loc=[SUPPLY] * len(c.henchman_names),
        intel_loc=[SUPPLY] * len(c.intel_token_type),
        intel_face_up=[False] * len(c.intel_token_type),
        airport_closed=[False] * c.n_spaces,
        close_tokens_left=int(c.n_close_airport_tokens),
        un_supply=int(c.n_un_transport),
        villain=Deck(villain_pile),
        next_to_lobo=[],
        villain_removed=villain_removed,
        fate=Deck(list(range(len(c.fate_city)))),
        encounters=[Deck([x for x in range(len(c.encounter_deck)) if c.encounter_deck[x] == d]) for d in range(len(K.DECKS))],
        top_secret=Deck(list(range(len(c.top_secret_effect)))),
        status_holder=[-1] * c.n_status,
        rng=rng,
        strategies=list(strategies),
        trace=[] if trace else None,
    )
    g.say(
        f"SETUP {n} player(s), variant {s.variant_label}, seed {seed}, game {game}: "
        f"Dr. Lobo at {g.lobo}, Location target {g.location_target}, "
        f"{len(villain_removed)} villain card(s) removed"
    )
    for p in players:
        for _ in range(int(c.character_start_un[p.character])):
            gain_un(g, p.seat)
    for p in players:
        deal_start_status(g, p.seat)
    for p in players:
        choose_advanced_skills(g, p.seat)
    # henchmen starting at level 2 (the players choose which)
    k = 0 if (s.easier and c.easier_henchmen_level1[n]) else int(c.setup_henchmen_level2[n])
    if k:
        strat = g.strategy(0)
        chosen = strat.setup_level2_henchmen(g.view(0, "setup_level2_henchmen"), k)
        if isinstance(chosen, np.ndarray):
            if not is_index_array(chosen):
                raise StrategyError(f"strategy {strat.name!r} chose henchmen {chosen.tolist()!r} for level 2 as a "
                                    f"{chosen.ndim}-d {chosen.dtype} array (need {k} different henchmen: a list, a "
                                    "tuple or a 1-d integer array)")
            chosen = chosen.tolist()
        if (
            not isinstance(chosen, (list, tuple))
            or len(set(chosen)) != k
            or not all(is_integer(h) and 0 <= h < len(g.henchman_level) for h in chosen)  # True is no henchman
        ):
            raise StrategyError(f"strategy {strat.name!r} chose henchmen {chosen!r} for level 2 (need {k})")
        chosen = [int(h) for h in chosen]
        for h in chosen:
            g.henchman_level[h] = 2
        g.say("  henchmen at level 2: " + ", ".join(c.henchman_names[h] for h in sorted(chosen)))
    # extra UN Transports and Top Secret cards by player count (and the easier variant)
    for p in players:
        giver = p.gives_un
        un = int((c.setup_giver_extra_un if giver else c.setup_extra_un)[n])
        ts = int((c.setup_giver_extra_top_secret if giver else c.setup_extra_top_secret)[n])
        choice = int(c.setup_extra_choice[n])
        if choice:
            cap = int(c.setup_giver_choice_max_un[n]) if giver else choice
            a, b = choose_extras(g, p.seat, choice, un_left(g.un_supply, un, cap))
            un, ts = un + a, ts + b
        if s.easier:
            ts += int(c.easier_extra_top_secret[n])
            e = int(c.easier_extra_choice[n])
            if e:
                a, b = choose_extras(g, p.seat, e, un_left(g.un_supply, un, e))
                un, ts = un + a, ts + b
        for _ in range(un):
            gain_un(g, p.seat)
        for _ in range(ts):
            draw_top_secret(g, p.seat)
        g.say(f"  {name(g, p.seat)} starts at {c.space_names[p.space]} with Resolve {p.resolve}, "
              f"{p.un_tokens} UN Transport(s), {len(p.top_secret)} Top Secret card(s)")
    for p in players:
        deal_missions(g, p.seat)
    for _ in range(int(c.setup_board_intel[n])):
        card = draw_card(g, g.fate, FATE)
        city = int(c.fate_city[card])
        g.fate.discard.append(card)
        t = draw_token(g, g.intel_loc, SUPPLY)
        g.intel_loc[t] = city
        g.say(f"  Intel placed at {c.space_names[city]}")
    return g
