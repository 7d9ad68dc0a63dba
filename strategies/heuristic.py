"""``heuristic``: a sensible player whose behaviour is set by named parameters.

The decisions are plain arithmetic on public state so that the numba kernel can
repeat them exactly. Two contrasting settings are registered as ``cautious``
(collect Intel first, keep Resolve, rest early) and ``bold`` (exchange Intel for
Location tokens at once, spend freely).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, fields

import numpy as np

from sim.content import constants as K
from sim.odds import content_pass_table
from sim.poker import HIGH_CARD, choose_exchange, hand_category, hand_value
from sim.rules.choices import Means, Reward, TokenChoice
from sim.rules.skill_tests import autopass_counts, autopass_encounter_counts, autopass_level1_counts
from strategies.base import Strategy

MOVE_COST = {Means.STAY: 0, Means.WALK: 0, Means.PLANE: 0, Means.UN: 2, Means.UN_GIFT: 2, Means.TOP_SECRET_UN: 3}
LASTING = (K.SE_SKILL_MODIFIER, K.SE_LOSE_TURN)  # negative status effects worth a mission reward
REWARD_KINDS = {"top_secret": Reward.TOP_SECRET, "resolve": Reward.RESOLVE, "un": Reward.UN_TRANSPORT, "skill": Reward.SKILL}
EXCHANGE_WHEN = ("never", "late", "early")
MAX_INT_PARAM = 1_000_000_000
# integer knobs a negative value of which means nothing 0 does not (counts, rounds, distances, margins
# below a player's life): refused, so that no setting plays as another without a word. cancel_at is
# compared with villain card values, which can be negative, so it may be negative too.
SIGNED_INT_PARAMS = ("cancel_at",)
# float knobs compared with a probability (a gamble's P(win), a test's P(pass)): a value below 0 or above 1
# plays as 0 or 1 does (or as a bound no game meets), so it is refused as the other kinds' off-range values are
PROBABILITY_PARAMS = ("gamble_p", "auto_pass_below")


@dataclass(frozen=True)
class HeuristicParams:
    """The knobs of the heuristic player (see the README's strategy tour)."""

    # dice: stop drawing beyond the successes needed when this close to a knockout
    dice_stop_margin: int = 1
    # Resolve for +1 die: "never", "henchman" (henchman tests only) or "always"
    plus_one: str = "henchman"
    # reroll one non-success die of a failed test for Resolve
    reroll: bool = True
    # Resolve kept back from ordinary encounters (henchman tests may use all of it)
    resolve_reserve: int = 1
    # spend Resolve on +1 movement point when it reaches the target
    move_resolve: bool = True
    # Intel: take yellow tokens into the Pool until it holds this many
    pool_target: int = 8
    # do not take on the henchman that would end the game before the Pool holds this many
    # (released when waiting cannot help: see HeuristicStrategy._ready_to_fight)
    final_pool_min: int = 7
    # ... but take it on once the Pool holds pool_target (the player pools no more)
    release_at_pool_target: bool = False
    # from this round on, stop waiting for the Pool: fight the game-ending henchman and
    # exchange Intel for green tokens whatever the Pool thresholds say (the stall guard)
    patience_rounds: int = 40
    # exchange yellow Intel for a green Location token: "never", "late" (once the Pool
    # holds exchange_min_pool) or "early" (whenever fewer than max_greens are out)
    exchange_when: str = "late"
    exchange_min_pool: int = 3
    max_greens: int = 2
    # use a UN Transport when the target is at least this many steps away
    un_min_distance: int = 4
    # rest (with 2+ injuries) when this close to a knockout
    rest_margin: int = 1
    # secret mission reward preference: "top_secret", "resolve", "un" or "skill"
    mission_reward: str = "top_secret"
    # gamble: spend Resolve to exchange up to 5 cards on a high-card hand
    gamble_resolve: bool = False
    # the strategy's estimate of P(win) of a gamble, to compare with skill options
    gamble_p: float = 0.61  # exchange_1 against the House, from `smersh-sim odds gamble`
    # Top Secret auto-pass on henchman tests whose P(pass) is below this
    auto_pass_below: float = 0.75
    # cancel a villain advancement of at least this value (or any that would reach 9)
    cancel_at: int = 2
    # with the Watch showing a -1 card, fail an ordinary test on purpose (roll no bag die,
    # decline an automatic pass)
    watch_fail: bool = True

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            kind = f.type if isinstance(f.type, str) else f.type.__name__
            if kind == "bool":
                ok = isinstance(v, (bool, np.bool_))
            elif kind == "int":
                # the kernel keeps parameters as float64: integers must stay exact there
                low = -MAX_INT_PARAM if f.name in SIGNED_INT_PARAMS else 0
                ok = isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and low <= int(v) <= MAX_INT_PARAM
            elif kind == "float":
                ok = (isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                      and math.isfinite(float(v)))
                if ok and f.name in PROBABILITY_PARAMS:
                    ok = 0.0 <= float(v) <= 1.0
            else:
                ok = isinstance(v, str)
            if ok and kind in ("bool", "int", "float"):  # a numpy scalar as the Python value both engines read:
                # the readable engine compared np.float32(0.6669...) in float32 where the kernel widened it
                object.__setattr__(self, f.name, {"bool": bool, "int": int, "float": float}[kind](v))
            if not ok:
                low = -MAX_INT_PARAM if f.name in SIGNED_INT_PARAMS else 0
                want = {"bool": "true or false", "int": f"an integer from {low:,} to {MAX_INT_PARAM:,}",
                        "float": "a finite number"}.get(kind, "a string")
                if f.name in PROBABILITY_PARAMS:
                    want = "a finite number from 0 to 1 (a probability)"
                raise ValueError(f"{f.name} must be {want}, got {type(v).__name__} {v!r}")
        if self.plus_one not in ("never", "henchman", "always"):
            raise ValueError(f"plus_one must be 'never', 'henchman' or 'always', got {self.plus_one!r}")
        if self.exchange_when not in EXCHANGE_WHEN:
            raise ValueError(f"exchange_when must be one of {EXCHANGE_WHEN}, got {self.exchange_when!r}")
        if self.mission_reward not in REWARD_KINDS:
            raise ValueError(f"mission_reward must be one of {tuple(REWARD_KINDS)}, got {self.mission_reward!r}")


@functools.lru_cache(maxsize=8)
def distance_lists(content) -> list[list[int]]:
    """The pack's hop distances as nested lists (fast scalar lookups)."""
    return [[int(x) for x in row] for row in content.hop_distance]


# keyword names a strategy is built with that are not parameters: given as one (``--param name=x``,
# ``params = {players = 2}``) they are refused as unknown, never taken for the label or the seat count
NOT_PARAMS = {"name": "the strategy's label", "players": "the seat count, which the game gives"}


def check_param_names(params) -> None:
    """Refuse a parameter name the heuristic does not take (a ValueError listing the known ones); ``name``
    and ``players`` are not parameters and are refused the same way, saying what they are."""
    known = {f.name for f in fields(HeuristicParams)}
    unknown = sorted(set(params) - known)
    if unknown:
        notes = [f"{k} is {NOT_PARAMS[k]}, not a parameter" for k in unknown if k in NOT_PARAMS]
        note = f" ({'; '.join(notes)})" if notes else ""
        raise ValueError(f"unknown heuristic parameter(s): {', '.join(unknown)}{note}; known: {', '.join(sorted(known))}")


class HeuristicStrategy(Strategy):
    """A sensible player; see :class:`HeuristicParams` for what can be tuned."""

    def __init__(self, name: str = "heuristic", **params):
        check_param_names(params)
        self.name = name
        self.p = HeuristicParams(**params)

    def params(self) -> dict:
        return asdict(self.p)

    def kernel_vector(self) -> tuple[int, np.ndarray]:
        """``(strategy id, parameter vector)`` of the kernel's twin (sim.kernel.strategy)."""
        from sim.kernel.layout import HEURISTIC, N_PARAMS, PARAM_INDEX, PLUS_ONE_CODES

        names = {f.name for f in fields(HeuristicParams)}
        if names != set(PARAM_INDEX):
            raise ValueError(
                "sim.kernel.layout: HeuristicParams changed; the kernel knows "
                f"{sorted(PARAM_INDEX)} but the strategy has {sorted(names)}"
            )
        prm = np.zeros(N_PARAMS, dtype=np.float64)
        for name, i in PARAM_INDEX.items():
            v = getattr(self.p, name)
            if name == "plus_one":
                v = PLUS_ONE_CODES[v]
            elif name == "exchange_when":
                v = EXCHANGE_WHEN.index(v)
            elif name == "mission_reward":
                v = int(REWARD_KINDS[v])
            prm[i] = float(v)
        return HEURISTIC, prm

    # --- helpers ---------------------------------------------------------------------
    def _p_pass(self, view, skill_total: int, needed: int) -> float:
        table = content_pass_table(view.content)
        me = view.me
        k = min(max(skill_total, 0), 5)
        can_reroll = self.p.reroll and me.resolve > 0 and not view.dice_resolve_used
        return float(table[k, min(needed, 2) - 1, 1 if can_reroll else 0])

    def _may_spend(self, view, henchman: bool) -> bool:
        me = view.me
        return me.resolve > 0 and (henchman or me.resolve > self.p.resolve_reserve)

    def _watch_fail(self, view, test) -> bool:
        return (self.p.watch_fail and view.watched_advance is not None and view.watched_advance < 0
                and test.henchman < 0 and not test.no_advance)

    def _wants_intel(self, view) -> bool:
        return view.pool_size < self.p.pool_target or self._wants_exchange(view)

    def _impatient(self, view) -> bool:
        """Round ``patience_rounds`` has come: waiting for the Pool has not helped."""
        return view.rounds >= self.p.patience_rounds

    def _wants_exchange(self, view) -> bool:
        """Exchange yellow Intel for a green token now?

        "late" waits for ``exchange_min_pool`` in the Pool (above ``pool_target`` only
        Top Secret cards add Intel, so the wait can be long); once impatient the player
        exchanges while fewer than max(max_greens, 1) green spaces are out, whatever
        ``exchange_when`` says.
        """
        if view.green_supply_size == 0:
            return False
        greens = len(view.green_spaces())
        if self._impatient(view):
            return greens < max(self.p.max_greens, 1)
        if self.p.exchange_when == "never" or greens >= self.p.max_greens:
            return False
        return self.p.exchange_when == "early" or view.pool_size >= self.p.exchange_min_pool

    def _ready_to_fight(self, view) -> bool:
        """Fight henchmen unless the win would end the game with too small a Pool.

        The hold on the game-ending henchman is released when waiting cannot help:
        from round ``patience_rounds`` on, and (with ``release_at_pool_target``) once
        the Pool holds ``pool_target`` (the player takes no more Intel from the board,
        so it could wait for ``final_pool_min`` in vain). Without the release a team that
        rarely fails a test (Dr. Lobo advances only on failures) could wait at Location
        target - 1 for ever.
        """
        pool = view.pool_size
        return (view.location_track < view.location_target - 1 or pool >= self.p.final_pool_min
                or (self.p.release_at_pool_target and pool >= self.p.pool_target) or self._impatient(view))

    def _target(self, view) -> int:
        """Nearest green token, else (if Intel is wanted) nearest yellow, else a mission city."""
        dist = distance_lists(view.content)
        here = view.me.space
        greens = view.green_spaces() if self._ready_to_fight(view) else []
        for spaces in (greens, view.yellow_spaces() if self._wants_intel(view) else [],
                       view.mission_cities()):
            if spaces:
                return min(spaces, key=lambda s: (dist[here][s], s))
        return -1

    def _best_skill(self, view, skills) -> int:
        me = view.me
        return max(range(len(skills)), key=lambda i: (me.skills[skills[i]], -skills[i]))

    # --- set-up ------------------------------------------------------------------------
    def setup_level2_henchmen(self, view, k):
        c = view.content
        best = []
        for h in range(len(c.henchman_names)):
            score = -99
            for i in range(K.MAX_OPTIONS):
                s = int(c.henchman_option_skill[h, 1, i])
                if s < 0:
                    continue
                team = max(p.skills[s] for p in view.players)
                score = max(score, team + int(c.henchman_option_modifier[h, 1, i])
                            - 2 * (int(c.henchman_option_successes[h, 1, i]) - 1))
            best.append((-score, h))
        return [h for _, h in sorted(best)[:k]]

    def setup_extras(self, view, n, max_un):
        return min(1, n, max_un)

    def setup_advanced_skill(self, view, skills):
        """First pick: the skill that passes the most level-1 henchmen automatically and nobody
        at the table holds yet; every other pick (and the first, when no such skill is left):
        the skill that passes the most encounter sides automatically. Ties: the lower skill."""
        first = not any(view.me.advanced)
        held = [any(p.advanced[s] for p in view.players) for s in range(len(K.ADVANCED_SKILLS))]
        h1 = autopass_level1_counts(view.content)
        enc = autopass_encounter_counts(view.content)

        def key(i):
            s = skills[i]
            return (h1[s] if first and not held[s] else 0, enc[s], -s)

        return max(range(len(skills)), key=key)

    # --- movement ----------------------------------------------------------------------
    def rest(self, view):
        me = view.me
        return me.life - me.injuries <= self.p.rest_margin

    def move(self, view, moves):
        dist = distance_lists(view.content)
        me = view.me
        target = self._target(view)
        if target < 0:
            for i, m in enumerate(moves):
                if m.means == Means.STAY:
                    return i
            target = min(range(view.content.n_cities), key=lambda s: (dist[me.space][s], s))
        far = dist[me.space][target]
        free_reach = any(m.dest == target and not m.resolve and MOVE_COST[m.means] == 0 for m in moves)
        best, best_key = 0, None
        for i, m in enumerate(moves):
            cost = MOVE_COST[m.means] + (1 if m.resolve else 0)
            if cost:
                if m.dest != target or free_reach:
                    continue
                if m.resolve and not (self.p.move_resolve and self._may_spend(view, False)):
                    continue
                if MOVE_COST[m.means] and far < self.p.un_min_distance:
                    continue
            key = (dist[m.dest][target], cost, int(m.means), m.dest)
            if best_key is None or key < best_key:
                best, best_key = i, key
        return best

    # --- tokens and tests --------------------------------------------------------------
    def token(self, view, choices):
        if TokenChoice.HENCHMAN in choices and self._ready_to_fight(view):
            return choices.index(TokenChoice.HENCHMAN)
        if TokenChoice.EXCHANGE in choices and self._wants_exchange(view):
            return choices.index(TokenChoice.EXCHANGE)
        if TokenChoice.POOL in choices and view.pool_size < self.p.pool_target:
            return choices.index(TokenChoice.POOL)
        return 0

    def test_option(self, view, options):
        me = view.me
        scores = []
        for o in options:
            if o.gamble:
                scores.append(self.p.gamble_p)
            else:
                scores.append(self._p_pass(view, me.skills[o.skill] + o.modifier + view.status_modifier(o.skill),
                                           o.successes))
        return max(range(len(options)), key=lambda i: (scores[i], -i))

    def use_auto_pass(self, view, skill, henchman, no_advance):
        """Always, except where ``watch_fail`` fails an ordinary test on purpose (the Watch shows -1)."""
        return not (self.p.watch_fail and view.watched_advance is not None and view.watched_advance < 0
                    and henchman < 0 and not no_advance)

    def draw_die(self, view, test, drawn):
        if self._watch_fail(view, test):
            return False
        me = view.me
        if len(drawn) >= test.option.successes and me.life - me.injuries <= self.p.dice_stop_margin:
            return False
        return True

    def resolve_plus_one(self, view, test, drawn):
        if self._watch_fail(view, test) or self.p.plus_one == "never" or len(drawn) >= 5:
            return False
        henchman = test.henchman >= 0
        if self.p.plus_one == "henchman" and not henchman:
            return False
        return self._may_spend(view, henchman)

    def reroll(self, view, test, dice, faces):
        if not self.p.reroll or self._watch_fail(view, test):
            return -1
        c = view.content
        succ = sum(int(c.die_success[d, f]) for d, f in zip(dice, faces))
        if succ != test.option.successes - 1 or not self._may_spend(view, test.henchman >= 0):
            return -1
        best, key = -1, None
        for i, (d, f) in enumerate(zip(dice, faces)):
            if c.die_success[d, f]:
                continue
            k = (int(c.die_success[d].sum()), int(c.die_injury[d, f]), -i)
            if key is None or k > key:
                best, key = i, k
        return best

    def gamble_exchange(self, view, hand, free):
        c = view.content
        ranks = np.array([c.fate_rank[x] for x in hand], dtype=np.int64)
        suits = np.array([c.fate_suit[x] for x in hand], dtype=np.int64)
        if self.p.gamble_resolve and self._may_spend(view, False):
            cat = hand_category(hand_value(*[int(x) for x in ranks], *[int(x) for x in suits]))
            if cat == HIGH_CARD:
                mask5 = choose_exchange(ranks, suits, 5)
                if bin(mask5).count("1") > free:
                    return int(mask5), True
        return int(choose_exchange(ranks, suits, free)), False

    # --- rewards -------------------------------------------------------------------------
    def mission_reward(self, view, options):
        # a negative status card with a lasting effect goes first (a Resolve card's effect is spent)
        c = view.content
        for i, o in enumerate(options):
            if o.kind == Reward.DISCARD_STATUS and c.status_effect[o.card] in LASTING:
                return i
        want = REWARD_KINDS[self.p.mission_reward]
        order = [want] + [k for k in (Reward.TOP_SECRET, Reward.RESOLVE, Reward.UN_TRANSPORT, Reward.SKILL) if k != want]
        me = view.me
        for kind in order:
            idx = [i for i, o in enumerate(options) if o.kind == kind]
            if idx:
                if kind == Reward.SKILL:
                    return max(idx, key=lambda i: (me.skills[options[i].skill], -options[i].skill))
                return idx[0]
        return 0

    def skill_up(self, view, skills):
        return self._best_skill(view, skills)

    def skill_down(self, view, skills):
        """Lower the weakest skill (lowest skill code on ties): the one it tests least."""
        me = view.me
        return min(range(len(skills)), key=lambda i: (me.skills[skills[i]], skills[i]))

    def status_top_secret(self, view):
        """A Top Secret card, unless Resolve is short (at or below the reserve, below the maximum)."""
        me = view.me
        return not (me.resolve < me.resolve_max and me.resolve <= self.p.resolve_reserve)

    def advanced_skill(self, view, skills):
        counts = autopass_counts(view.content)
        return max(range(len(skills)), key=lambda i: (counts[skills[i]], -skills[i]))

    # --- Top Secret and the Watch -----------------------------------------------------------
    def play_auto_pass(self, view, test):
        if test.henchman < 0:
            return False
        return self._p_pass(view, test.dice_allowed, test.option.successes) < self.p.auto_pass_below

    def play_two_dice(self, view, test):
        return test.henchman >= 0 and test.dice_allowed < 5

    def cancel_advance(self, view, card):
        c = view.content
        value = 0 if c.villain_injury[card] else int(c.villain_advance[card])
        return value >= self.p.cancel_at or (value > 0 and view.lobo + value >= c.lobo_loss)

    def heal_all(self, view):
        me = view.me
        return me.life - me.injuries <= self.p.rest_margin + 1

    def intel_to_pool(self, view):
        return True

    def use_watch(self, view):
        return self.p.watch_fail


CAUTIOUS = {
    "exchange_when": "late",
    "exchange_min_pool": 5,
    "max_greens": 1,
    "pool_target": 8,
    "resolve_reserve": 2,
    "rest_margin": 2,
    "dice_stop_margin": 2,
    "plus_one": "henchman",
    "un_min_distance": 5,
    "mission_reward": "resolve",
}
BOLD = {
    "exchange_when": "early",
    "max_greens": 3,
    "pool_target": 5,
    "resolve_reserve": 0,
    "rest_margin": 0,
    "dice_stop_margin": 0,
    "plus_one": "always",
    "un_min_distance": 3,
    "gamble_resolve": True,
    "mission_reward": "top_secret",
}
