"""Secret missions: flipping mission cards and claiming the reward (field manual 2 and 3)."""

from __future__ import annotations

from sim.content.constants import NEGATIVE
from sim.rng import FATE
from sim.rules.choices import MissionReward, Reward
from sim.rules.decks import cards_in, draw_card
from sim.rules.errors import RuleError, StrategyError, is_index
from sim.rules.state import GameState
from sim.rules.status import discard_status
from sim.rules.villain import name


def deal_missions(g: GameState, seat: int) -> None:
    """Draw two Fate cards as the player's secret-mission cities."""
    p = g.players[seat]
    p.missions = []
    for _ in range(2):
        card = draw_card(g, g.fate, FATE)
        if card < 0:
            raise RuleError("Fate deck exhausted while dealing secret missions")
        p.missions.append(card)
    p.mission_flipped = [False, False]
    g.say(
        f"  {name(g, seat)} secret missions: "
        + ", ".join(g.content.space_names[int(g.content.fate_city[f])] for f in p.missions)
    )


def flip_missions(g: GameState, seat: int) -> None:
    """On a mission city at the start of the encounter phase, that mission card flips."""
    p = g.players[seat]
    for i, card in enumerate(p.missions):
        if not p.mission_flipped[i] and int(g.content.fate_city[card]) == p.space:
            p.mission_flipped[i] = True
            g.say(f"  secret mission {g.content.space_names[p.space]} flipped")


def reward_options(g: GameState, seat: int) -> list[MissionReward]:
    from sim.content.constants import BASIC_SKILLS
    from sim.rules.encounters import skill_max

    p = g.players[seat]
    options = []
    if cards_in(g.top_secret) + len(g.top_secret.discard) > 0:
        options.append(MissionReward(Reward.TOP_SECRET))
    if p.resolve < p.resolve_max:
        options.append(MissionReward(Reward.RESOLVE))
    if g.un_supply > 0:
        options.append(MissionReward(Reward.UN_TRANSPORT))
    for s in range(len(BASIC_SKILLS)):
        if p.skills[s] < skill_max(g, seat):
            options.append(MissionReward(Reward.SKILL, s))
    # "alternatively, a negative Status Card can be discarded": one option per negative kind held
    c = g.content
    kinds = sorted({int(c.status_type[x]) for x in g.status_of(seat)
                    if c.status_polarity[c.status_type[x]] == NEGATIVE})
    options.extend(MissionReward(Reward.DISCARD_STATUS, card=k) for k in kinds)
    return options


def mission_reward(g: GameState, seat: int) -> None:
    """Both mission cards flipped: claim one reward, then draw two new missions."""
    from sim.rules.encounters import draw_top_secret, gain_resolve, gain_un, raise_skill

    p = g.players[seat]
    if not all(p.mission_flipped):
        return
    g.stats.missions_completed += 1
    options = reward_options(g, seat)
    if options:
        strat = g.strategy(seat)
        i = strat.mission_reward(g.view(seat, "mission_reward"), list(options))
        if not is_index(i) or not 0 <= i < len(options):
            raise StrategyError(f"strategy {strat.name!r} chose mission reward {i!r} of {len(options)}")
        r = options[int(i)]
        what = r.kind.name.lower().replace("_", " ")
        if r.kind == Reward.SKILL:
            from sim.content.constants import BASIC_SKILLS

            what = f"+1 {BASIC_SKILLS[r.skill]}"
        elif r.kind == Reward.DISCARD_STATUS:
            what = f"discard the status card {g.content.status_names[r.card]!r}"
        g.say(f"{name(g, seat)} completes a secret mission: reward {what}")
        if r.kind == Reward.TOP_SECRET:
            draw_top_secret(g, seat)
        elif r.kind == Reward.RESOLVE:
            gain_resolve(g, seat, int(g.content.setup_mission_resolve[g.settings.players]))
        elif r.kind == Reward.UN_TRANSPORT:
            gain_un(g, seat)
        elif r.kind == Reward.DISCARD_STATUS:
            discard_status(g, next(x for x in g.status_of(seat) if g.content.status_type[x] == r.card))
        else:
            raise_skill(g, seat, r.skill, +1)
    g.fate.discard.extend(p.missions)
    deal_missions(g, seat)
