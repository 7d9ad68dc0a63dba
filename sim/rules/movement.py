"""Movement phase: rest, walk (ocean stop, Trans-Siberian train), plane, UN Transport.

Field manual "1 Movement" and "UN Transport"; docs/RULES.md "Movement". The engine lists
every legal move (destination x means x Resolve) and the strategy picks one.
"""

from __future__ import annotations

import functools

from sim.content import constants as K
from sim.rng import DICE
from sim.rules.choices import Means, Move
from sim.rules.errors import StrategyError, is_index
from sim.rules.state import GameState
from sim.rules.status import extra_mp
from sim.rules.villain import _play_top_secret, _top_secret_card, heal, name, villain_advancement


def airport_open(g: GameState, space: int) -> bool:
    """Open airport: has one, and is red (never closes) or not closed."""
    c = g.content
    return bool(c.space_airport[space]) and (bool(c.space_red_airport[space]) or not g.airport_closed[space])


@functools.lru_cache(maxsize=8)
def steps_table(content) -> tuple[tuple[int, ...], ...]:
    """Spaces one movement point from each space (connections and train hops), ascending."""
    c = content
    train = [t for t in range(c.n_spaces) if c.space_train[t]]
    table = []
    for space in range(c.n_spaces):
        out = {int(x) for x in c.neighbor_list[c.neighbor_start[space] : c.neighbor_start[space + 1]]}
        if c.space_train[space]:
            out.update(t for t in train if t != space)
        table.append(tuple(sorted(out)))
    return tuple(table)


def steps_from(g: GameState, space: int) -> tuple[int, ...]:
    """Spaces one movement point away: connections, plus train hops between train cities."""
    return steps_table(g.content)[space]


def walk_costs(g: GameState, start: int, budget: int) -> dict[int, int]:
    """Fewest MP to reach each space within ``budget``; entering an ocean ends movement."""
    kind = _map_lists(g.content)[2]
    cost = {start: 0}
    frontier = [start]
    for mp in range(1, budget + 1):
        nxt = []
        for s in frontier:
            if s != start and kind[s] == K.OCEAN:
                continue  # movement stopped in this ocean
            for t in steps_from(g, s):
                if t not in cost:
                    cost[t] = mp
                    nxt.append(t)
        frontier = nxt
    return cost


def can_rest(g: GameState, seat: int) -> bool:
    """Resting needs 2+ injuries and is not allowed on a regional area or island."""
    p = g.players[seat]
    return p.injuries >= 2 and g.content.space_kind[p.space] != K.REGIONAL


@functools.cache
def _move(dest: int, means: Means, resolve: bool = False, steps: int = 0) -> Move:
    """Moves are immutable values: build each one once."""
    return Move(dest, means, resolve, steps)


@functools.lru_cache(maxsize=8)
def _map_lists(content) -> tuple[list[bool], list[bool], list[int], dict]:
    """Per-pack lookups as plain lists (numpy scalar indexing is slow in a hot loop)."""
    c = content
    airport = [bool(x) for x in c.space_airport]
    red = [bool(x) for x in c.space_red_airport]
    kind = [int(x) for x in c.space_kind]
    un = {m: tuple(_move(d, m) for d in range(c.n_spaces) if kind[d] != K.REGIONAL)
          for m in (Means.UN, Means.UN_GIFT, Means.TOP_SECRET_UN)}
    return airport, red, kind, un


def legal_moves(g: GameState, seat: int) -> list[Move]:
    """Every legal move of the active player, in a canonical order."""
    c = g.content
    airport, red, kind, un_moves = _map_lists(c)
    closed = g.airport_closed
    p = g.players[seat]
    here = p.space
    regional = kind[here] == K.REGIONAL
    can_resolve = p.resolve > 0 and not g.move_resolve_used
    moves: list[Move] = []
    if not regional:
        moves.append(_move(here, Means.STAY))
    # walking and trains (an extra_move status card: one more movement point)
    free = K.BASE_MP + extra_mp(g, seat)
    costs = walk_costs(g, here, free + 1)
    for dest in sorted(costs):
        mp = costs[dest]
        if dest == here:
            continue
        if mp <= free:
            moves.append(_move(dest, Means.WALK, False, mp))
        elif can_resolve:
            moves.append(_move(dest, Means.WALK, True, mp))
    # planes: from the starting city's open airport to any other open airport (all MP),
    # then 1 Resolve may buy one more movement point
    if airport[here] and (red[here] or not closed[here]):
        plane_dest = [a for a in range(c.n_spaces) if a != here and airport[a] and (red[a] or not closed[a])]
        for a in plane_dest:
            moves.append(_move(a, Means.PLANE, False, K.BASE_MP))
        if can_resolve:
            seen = set()
            for a in plane_dest:
                for t in steps_from(g, a):
                    if t != a and t not in seen:
                        seen.add(t)
            for t in sorted(seen):
                moves.append(_move(t, Means.PLANE, True, K.BASE_MP + 1))
    # UN Transport: any city or ocean space, never into a regional area or island
    means = []
    if p.un_tokens > 0:
        means.append(Means.UN)
    elif any(q.gives_un and q.un_tokens > 0 for q in g.players if q.seat != seat):
        means.append(Means.UN_GIFT)
    if _top_secret_card(g, p, K.TS_UN_TRANSPORT) >= 0:
        means.append(Means.TOP_SECRET_UN)
    for m in means:
        moves.extend(mv for mv in un_moves[m] if mv.dest != here)
    return moves


def rest(g: GameState, seat: int) -> None:
    """Rest action: heal 2 injuries; in a solo game also roll the rest die (Blue)."""
    p = g.players[seat]
    heal(g, seat, 2)
    g.say(f"{name(g, seat)} rests: heals 2, injuries now {p.injuries}")
    die = int(g.content.setup_rest_roll_die[g.settings.players])
    if die >= 0:
        face = g.rng.below(6, DICE)
        ok = bool(g.content.die_success[die, face])
        g.say(f"  solo rest: rolls the {g.content.die_names[die]} die: {'success' if ok else 'no success'}")
        if not ok:
            villain_advancement(g)


def apply_move(g: GameState, seat: int, move: Move) -> None:
    """Carry out a chosen move, paying Resolve / UN tokens / Top Secret cards."""
    c = g.content
    p = g.players[seat]
    if move.resolve:
        p.resolve -= 1
        g.move_resolve_used = True
        g.stats.resolve_spent += 1
    if move.means == Means.UN:
        p.un_tokens -= 1
        g.un_supply += 1
        g.stats.un_used += 1
    elif move.means == Means.UN_GIFT:
        giver = next(q for q in g.players if q.gives_un and q.un_tokens > 0 and q.seat != seat)
        giver.un_tokens -= 1
        g.un_supply += 1
        g.stats.un_used += 1
        g.say(f"  {name(g, giver.seat)} hands over a UN Transport token")
    elif move.means == Means.TOP_SECRET_UN:
        _play_top_secret(g, p, _top_secret_card(g, p, K.TS_UN_TRANSPORT))
        g.stats.un_used += 1
    src = p.space
    p.space = move.dest
    if move.means == Means.STAY:
        g.say(f"{name(g, seat)} stays at {c.space_names[src]}")
    else:
        extra = " (+1 MP for Resolve)" if move.resolve else ""
        g.say(
            f"{name(g, seat)} moves {c.space_names[src]} -> {c.space_names[move.dest]} "
            f"by {move.means.name.lower().replace('_', ' ')}{extra}"
        )


def movement_phase(g: GameState, seat: int) -> bool:
    """Rest or move. Returns True when the player rested (no encounter, 2 villain cards)."""
    strat = g.strategy(seat)
    if can_rest(g, seat) and strat.rest(g.view(seat, "rest")):
        rest(g, seat)
        return True
    moves = legal_moves(g, seat)
    if not moves:
        raise StrategyError(f"{name(g, seat)} has no legal move")  # cannot happen on a valid map
    i = strat.move(g.view(seat, "move"), moves)
    if not is_index(i) or not 0 <= i < len(moves):
        raise StrategyError(f"strategy {strat.name!r} chose move {i!r} of {len(moves)}")
    apply_move(g, seat, moves[int(i)])
    return False
