"""One game from set-up to the end: the turn loop (field manual "Game Phases")."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sim.content import Content
from sim.content import constants as K
from sim.rng import VILLAIN
from sim.rules.decks import draw_token, peek_card
from sim.rules.encounters import encounter_phase
from sim.rules.endgame import intel_pool_counts
from sim.rules.errors import GameOver
from sim.rules.missions import mission_reward
from sim.rules.movement import movement_phase
from sim.rules.setup import setup_game
from sim.rules.state import DEFEATED, POOL, SUPPLY, GameState, Outcome, Settings
from sim.rules.status import discard_status, first_held, status_name
from sim.rules.villain import (
    _play_top_secret,
    _top_secret_card,
    describe_advance,
    heal,
    name,
    villain_phase,
)


@dataclass
class GameRecord:
    """One row per game: the outcome and the counters a balance study aggregates."""

    seed: int
    game: int
    players: int
    characters: str
    strategy: str
    variant: str
    outcome: str
    win: bool
    turns: int
    rounds: int
    lobo: int
    location_track: int
    henchman_levels: str
    henchmen_defeated: int
    pool_weapon: int
    pool_tech: int
    pool_double_agent: int
    pool_atomic: int
    tests_attempted: int
    tests_passed: int
    henchman_tests: int
    henchman_passed: int
    card_henchman_tests: int
    card_henchman_passed: int
    gambles_played: int
    gambles_won: int
    injuries: int
    knockouts: int
    resolve_spent: int
    un_used: int
    overflows: int
    airports_closed: int
    missions_completed: int
    villain_drawn: int
    top_secret_played: int

    def as_dict(self) -> dict:
        return asdict(self)


def start_of_turn(g: GameState, seat: int) -> None:
    """Top Secret cards a player may play at the start of the turn, and a Watch status card."""
    p = g.players[seat]
    strat = g.strategy(seat)
    ts = _top_secret_card(g, p, K.TS_HEAL_ALL)
    if ts >= 0 and p.injuries > 0 and strat.heal_all(g.view(seat, "heal_all")):
        _play_top_secret(g, p, ts)
        heal(g, seat, p.injuries)
        g.say("  plays a Top Secret card: heals all injuries")
    ts = _top_secret_card(g, p, K.TS_INTEL_TO_POOL)
    if ts >= 0 and g.intel_in(SUPPLY) and strat.intel_to_pool(g.view(seat, "intel_to_pool")):
        _play_top_secret(g, p, ts)
        t = draw_token(g, g.intel_loc, SUPPLY)
        g.intel_loc[t] = POOL
        g.say("  plays a Top Secret card: 1 Intel from the supply into the Pool")
    if first_held(g, seat, K.SE_WATCH) >= 0 and strat.use_watch(g.view(seat, "use_watch")):
        g.watched = peek_card(g, g.villain, VILLAIN)
        g.say(f"  uses the Watch: top villain card advances {describe_advance(g, g.watched)}")


def play_turn(g: GameState, seat: int) -> None:
    """Movement, encounter, villain phase, secret-mission reward."""
    p = g.players[seat]
    g.turn += 1
    g.active = seat
    g.dice_resolve_used = False
    g.move_resolve_used = False
    g.watched = -1
    g.say(
        f"--- turn {g.turn} (round {g.rounds}): {name(g, seat)} at {g.content.space_names[p.space]} | "
        f"Lobo {g.lobo}, Location {g.location_track}/{g.location_target}, Pool {len(g.intel_in(POOL))}, "
        f"injuries {p.injuries}/{p.life}, Resolve {p.resolve}, UN {p.un_tokens}, TS {len(p.top_secret)}"
        + (f", status {', '.join(status_name(g, x) for x in g.status_of(seat))}" if g.status_of(seat) else "")
    )
    card = first_held(g, seat, K.SE_LOSE_TURN)
    if card >= 0:
        # a lose_turn status card: no movement, encounter or mission reward; the villain phase
        # draws its card as usual; the card is discarded
        discard_status(g, card)
        g.say(f"  loses this turn ({status_name(g, card)!r}, discarded)")
        villain_phase(g, 1)
        return
    start_of_turn(g, seat)
    rested = movement_phase(g, seat)
    p.rested_last = rested
    if not rested:
        encounter_phase(g, seat)
    villain_phase(g, 2 if rested else 1)
    mission_reward(g, seat)


def play_game(
    content: Content,
    settings: Settings,
    strategies: list,
    seed: int,
    game: int,
    *,
    trace: bool = False,
    after_turn=None,
) -> tuple[GameRecord, GameState]:
    """Play one game; ``strategies`` has one strategy per seat. Returns (record, final state)."""
    content = content.for_players(settings.players)  # the player count's own Lobo start / villain mix
    if len(strategies) != settings.players:
        raise ValueError(f"need one strategy per seat: {settings.players} seats, {len(strategies)} strategies")
    g = setup_game(content, settings, strategies, seed, game, trace)
    try:
        seat = 0
        while True:
            if g.turn >= int(content.turn_cap):
                g.outcome = Outcome.TIMEOUT
                g.say(f"GAME OVER: timeout after {g.turn} turns (a bug to report)")
                break
            play_turn(g, seat)
            if after_turn is not None:
                after_turn(g)
            seat = (seat + 1) % settings.players
    except GameOver:
        if after_turn is not None:
            after_turn(g)
    return record(g, seed, game), g


def team_label(names: list[str]) -> str:
    """A team's ``strategy`` label: the one name when every seat plays it, else the seats' names in seat
    order (``heuristic,bold,bold,heuristic``), so two seatings of the same strategies are told apart."""
    return names[0] if len(set(names)) == 1 else ",".join(names)


def record(g: GameState, seed: int, game: int) -> GameRecord:
    c = g.content
    pool = intel_pool_counts(g)
    return GameRecord(
        seed=seed,
        game=game,
        players=g.settings.players,
        characters=",".join(c.character_names[p.character] for p in g.players),
        strategy=team_label([s.name for s in g.strategies]),
        variant=g.settings.variant_label,
        outcome=g.outcome.label,
        win=g.outcome.is_win,
        turns=g.turn,
        rounds=g.rounds,
        lobo=g.lobo,
        location_track=g.location_track,
        henchman_levels="".join(str(x) for x in g.henchman_level),
        henchmen_defeated=sum(1 for x in g.henchman_level if x == DEFEATED),
        pool_weapon=pool[0],
        pool_tech=pool[1],
        pool_double_agent=pool[2],
        pool_atomic=pool[3],
        tests_attempted=g.stats.tests_attempted,
        tests_passed=g.stats.tests_passed,
        henchman_tests=g.stats.henchman_tests,
        henchman_passed=g.stats.henchman_passed,
        card_henchman_tests=g.stats.card_henchman_tests,
        card_henchman_passed=g.stats.card_henchman_passed,
        gambles_played=g.stats.gambles_played,
        gambles_won=g.stats.gambles_won,
        injuries=g.stats.injuries_taken,
        knockouts=g.stats.knockouts,
        resolve_spent=g.stats.resolve_spent,
        un_used=g.stats.un_used,
        overflows=g.stats.overflows,
        airports_closed=g.stats.airports_closed,
        missions_completed=g.stats.missions_completed,
        villain_drawn=g.stats.villain_drawn,
        top_secret_played=g.stats.top_secret_played,
    )
