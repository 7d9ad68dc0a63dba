#!/usr/bin/env python3
"""Write the default content pack (``sim/content/default/*.toml``).

Run once, with a fixed seed, to produce the TOML files; from then on the TOML
files are the source a designer edits and the loader reads. Running it again
rewrites them byte for byte the same (the output depends on nothing but this
script): ``python tools/make_default_pack.py [--out DIR]``.

Published facts (rulebooks) are written as such; everything else follows the
ASSUMED content of ``MODEL.md`` section C and is tagged ``assumed``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from sim.content.constants import ADVANCED_SKILLS, BASIC_SKILLS, DECKS, REGIONS  # noqa: E402

RANKS = ("4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUITS = ("clubs", "diamonds", "hearts", "spades")

SEED = 1962  # Dr. No
OUT = Path(__file__).resolve().parent.parent / "sim" / "content" / "default"
GENERATOR = "tools/make_default_pack.py"


def rng_for(part: str) -> random.Random:
    """An independent, seeded stream per file, so editing one part leaves the rest."""
    return random.Random(f"{SEED}:{part}")


# ------------------------------------------------------------------ TOML writing
def val(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)  # a valid TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(val(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def table(header: str, items: dict) -> str:
    lines = [f"[{header}]"] + [f"{k} = {val(v)}" for k, v in items.items()]
    return "\n".join(lines) + "\n"


def array_entry(header: str, items: dict) -> str:
    lines = [f"[[{header}]]"] + [f"{k} = {val(v)}" for k, v in items.items()]
    return "\n".join(lines) + "\n"


def head(title: str, lines: list[str]) -> str:
    out = [f"# {title}"]
    out += [f"# {x}" if x else "#" for x in lines]
    out += ["#", f"# Written by {GENERATOR} (seed {SEED}); edit freely from here on.", ""]
    return "\n".join(out) + "\n"


def meta(assumed: bool, source: str) -> str:
    return table("meta", {"assumed": assumed, "source": source}) + "\n"


# ------------------------------------------------------------------ dice
def dice() -> str:
    out = head(
        "Dice: the six custom dice. Faces: S success, I injury, II two injuries, H heal, - blank.",
        [
            "Yellow is always rolled and never goes in the bag; the other five are drawn from it.",
            "Faces are published except the sixth face of Black and Green (assumed blank).",
        ],
    )
    out += meta(False, "Field manual p.7 'Six Custom Dice'; MODEL.md section C")
    rows = [
        ("yellow", False, ["S", "I", "H", "-", "-", "-"], None),
        ("black", True, ["S", "S", "S", "S", "II", "-"], "sixth face assumed blank"),
        ("red", True, ["S", "S", "S", "-", "-", "-"], None),
        ("green", True, ["S", "S", "S", "I", "I", "-"], "sixth face assumed blank"),
        ("blue", True, ["S", "S", "-", "-", "-", "-"], None),
        ("brown", True, ["S", "-", "-", "-", "-", "-"], None),
    ]
    for name, in_bag, faces, note in rows:
        e = {"name": name, "in_bag": in_bag, "faces": faces}
        if note:
            e["assumed"] = ["faces"]
            e["note"] = note
        out += "\n" + array_entry("die", e)
    return out


# ------------------------------------------------------------------ intel
def intel() -> str:
    out = head(
        "Intel: the yellow Intel tokens by type, and other token supplies.",
        ["Token ids are numbered by type in the order weapon, tech, double_agent, atomic."],
    )
    out += meta(False, "Field manual p.2 'Field Components'; MODEL.md section C")
    out += table("tokens", {"weapon": 8, "tech": 5, "double_agent": 4, "atomic": 3, "total": 20})
    out += "\n" + table("components", {"un_transport": 8, "close_airport_tokens": 24})
    return out


# ------------------------------------------------------------------ map
# (name, continent, ussr, airport, red_airport); file order = space order
CITIES = [
    # Europe
    ("London", "europe", False, True, True),
    ("Paris", "europe", False, True, False),
    ("Madrid", "europe", False, True, False),
    ("Rome", "europe", False, True, False),
    ("Berlin", "europe", False, True, False),
    ("Vienna", "europe", False, True, False),
    ("Stockholm", "europe", False, True, False),
    ("Athens", "europe", False, True, False),
    ("Istanbul", "europe", False, True, False),
    # USSR (counts as Asia)
    ("Leningrad", "asia", True, True, False),
    ("Moscow", "asia", True, True, True),
    ("Sverdlovsk", "asia", True, False, False),
    ("Omsk", "asia", True, False, False),
    ("Novosibirsk", "asia", True, False, False),
    ("Irkutsk", "asia", True, False, False),
    ("Vladivostok", "asia", True, False, False),
    # Asia
    ("Tehran", "asia", False, True, False),
    ("Bombay", "asia", False, True, False),
    ("Calcutta", "asia", False, True, False),
    ("Bangkok", "asia", False, True, False),
    ("Singapore", "asia", False, True, False),
    ("Hong Kong", "asia", False, True, True),
    ("Peking", "asia", False, True, False),
    # Africa
    ("Cairo", "africa", False, True, False),
    ("Algiers", "africa", False, True, False),
    ("Casablanca", "africa", False, True, False),
    ("Dakar", "africa", False, False, False),
    ("Lagos", "africa", False, True, False),
    ("Nairobi", "africa", False, True, False),
    ("Johannesburg", "africa", False, True, False),
    # North America
    ("Montreal", "north_america", False, True, False),
    ("New York", "north_america", False, True, True),
    ("Washington", "north_america", False, True, False),
    ("Chicago", "north_america", False, True, False),
    ("Miami", "north_america", False, True, False),
    ("Havana", "north_america", False, False, False),
    ("Mexico City", "north_america", False, True, False),
    ("Los Angeles", "north_america", False, True, False),
    # South America
    ("Caracas", "south_america", False, True, False),
    ("Bogota", "south_america", False, False, False),
    ("Lima", "south_america", False, True, False),
    ("Santiago", "south_america", False, True, False),
    ("Buenos Aires", "south_america", False, True, False),
    ("Rio de Janeiro", "south_america", False, True, True),
]
OCEANS = [
    "Arctic Ocean",
    "North Atlantic",
    "South Atlantic",
    "Caribbean Sea",
    "North Pacific",
    "South Pacific",
    "Indian Ocean",
    "South China Sea",
]
# (name, continent, ussr, exits)
REGIONAL = [
    ("Siberia", "asia", True, ["Omsk", "Novosibirsk", "Irkutsk"]),
    ("Northern Territories", "asia", False, ["Singapore", "Indian Ocean", "South Pacific"]),
    ("Japan", "asia", False, ["Vladivostok", "Peking", "North Pacific"]),
    ("Congo", "africa", False, ["Lagos", "Nairobi", "Johannesburg"]),
]
TRAIN = ["Moscow", "Sverdlovsk", "Omsk", "Novosibirsk", "Irkutsk", "Vladivostok"]
EDGES = [
    # Europe
    ("London", "Paris"),
    ("London", "Berlin"),
    ("London", "Stockholm"),
    ("London", "North Atlantic"),
    ("Paris", "Madrid"),
    ("Paris", "Berlin"),
    ("Paris", "Rome"),
    ("Madrid", "Casablanca"),
    ("Madrid", "North Atlantic"),
    ("Rome", "Vienna"),
    ("Rome", "Athens"),
    ("Rome", "Algiers"),
    ("Berlin", "Vienna"),
    ("Berlin", "Stockholm"),
    ("Berlin", "Moscow"),
    ("Vienna", "Athens"),
    ("Stockholm", "Leningrad"),
    ("Stockholm", "Arctic Ocean"),
    ("Athens", "Istanbul"),
    ("Athens", "Cairo"),
    ("Istanbul", "Moscow"),
    ("Istanbul", "Tehran"),
    # USSR
    ("Leningrad", "Moscow"),
    ("Leningrad", "Arctic Ocean"),
    ("Moscow", "Sverdlovsk"),
    ("Sverdlovsk", "Omsk"),
    ("Omsk", "Novosibirsk"),
    ("Novosibirsk", "Irkutsk"),
    ("Irkutsk", "Vladivostok"),
    ("Irkutsk", "Peking"),
    ("Vladivostok", "Peking"),
    ("Vladivostok", "North Pacific"),
    ("Vladivostok", "Arctic Ocean"),
    # Asia
    ("Tehran", "Bombay"),
    ("Tehran", "Cairo"),
    ("Bombay", "Calcutta"),
    ("Bombay", "Indian Ocean"),
    ("Calcutta", "Bangkok"),
    ("Calcutta", "Indian Ocean"),
    ("Bangkok", "Singapore"),
    ("Bangkok", "Hong Kong"),
    ("Singapore", "Indian Ocean"),
    ("Singapore", "South China Sea"),
    ("Hong Kong", "Peking"),
    ("Hong Kong", "South China Sea"),
    # Africa
    ("Cairo", "Nairobi"),
    ("Algiers", "Casablanca"),
    ("Casablanca", "Dakar"),
    ("Casablanca", "North Atlantic"),
    ("Dakar", "Lagos"),
    ("Dakar", "South Atlantic"),
    ("Lagos", "Nairobi"),
    ("Lagos", "South Atlantic"),
    ("Nairobi", "Johannesburg"),
    ("Nairobi", "Indian Ocean"),
    ("Johannesburg", "South Atlantic"),
    ("Johannesburg", "Indian Ocean"),
    # North America
    ("Montreal", "New York"),
    ("Montreal", "Chicago"),
    ("Montreal", "North Atlantic"),
    ("Montreal", "Arctic Ocean"),
    ("New York", "Washington"),
    ("New York", "Chicago"),
    ("New York", "North Atlantic"),
    ("Washington", "Chicago"),
    ("Washington", "Miami"),
    ("Chicago", "Los Angeles"),
    ("Miami", "Havana"),
    ("Miami", "Caribbean Sea"),
    ("Havana", "Mexico City"),
    ("Havana", "Caribbean Sea"),
    ("Mexico City", "Los Angeles"),
    ("Mexico City", "Bogota"),
    ("Mexico City", "Caribbean Sea"),
    ("Los Angeles", "North Pacific"),
    # South America
    ("Caracas", "Bogota"),
    ("Caracas", "Rio de Janeiro"),
    ("Caracas", "Caribbean Sea"),
    ("Bogota", "Lima"),
    ("Lima", "Santiago"),
    ("Lima", "South Pacific"),
    ("Santiago", "Buenos Aires"),
    ("Santiago", "South Pacific"),
    ("Buenos Aires", "Rio de Janeiro"),
    ("Buenos Aires", "South Atlantic"),
    ("Rio de Janeiro", "South Atlantic"),
    # Oceans
    ("North Atlantic", "South Atlantic"),
    ("North Atlantic", "Caribbean Sea"),
    ("North Atlantic", "Arctic Ocean"),
    ("South Atlantic", "Indian Ocean"),
    ("North Pacific", "South Pacific"),
    ("North Pacific", "Arctic Ocean"),
    ("North Pacific", "South China Sea"),
    ("South Pacific", "Indian Ocean"),
    ("Indian Ocean", "South China Sea"),
]
CITY_NAMES = [c[0] for c in CITIES]
AIRPORT_CITIES = [c[0] for c in CITIES if c[3]]


def map_() -> str:
    out = head(
        "Map: cities, ocean spaces, regional areas, the Trans-Siberian railway and the connections.",
        [
            "Space order for the engine: cities (file order), then oceans, then regional areas.",
            "Connections are undirected, between cities and oceans. Regional areas (start-only,",
            "'arrows leading away') list their exits; nothing leads into them.",
            "USSR cities count as Asia. red_airport = never closes (needs airport = true).",
            "The whole board is ASSUMED: a 1960s world with one city per Fate card.",
        ],
    )
    out += meta(True, "MODEL.md section C (assumed board)")
    for name, continent, ussr, airport, red in CITIES:
        e = {"name": name, "continent": continent}
        if ussr:
            e["ussr"] = True
        e["airport"] = airport
        if red:
            e["red_airport"] = True
        e["assumed"] = True
        out += "\n" + array_entry("city", e)
    for name in OCEANS:
        out += "\n" + array_entry("ocean", {"name": name, "assumed": True})
    for name, continent, ussr, exits in REGIONAL:
        e = {"name": name, "continent": continent}
        if ussr:
            e["ussr"] = True
        e["exits"] = exits
        e["assumed"] = True
        if name == "Northern Territories":
            e["note"] = "deck and exits assumed"
        out += "\n" + array_entry("regional", e)
    out += "\n" + table(
        "railway", {"name": "Trans-Siberian", "cities": TRAIN, "assumed": ["cities"]}
    )
    out += "\n[connections]\nedges = [\n"
    out += "".join(f"    {val(list(e))},\n" for e in EDGES)
    out += "]\n"
    return out


# ------------------------------------------------------------------ villain
def villain() -> str:
    rng = rng_for("villain")
    kinds = [("plus_two", 2)] * 16 + [("plus_one", 1)] * 14 + [("minus_one", -1)] * 2
    kinds += [("injury", 0)] * 3
    rng.shuffle(kinds)
    closes = list(AIRPORT_CITIES)  # every airport named once (red ones included; they never close)
    rng.shuffle(closes)
    n = len(kinds)
    n_two = round(0.4 * n)
    adds_two = set(rng.sample(range(n), n_two))
    removes = set(rng.sample(range(n), round(0.4 * n)))
    out = head(
        "Villain deck: 35 cards. Advancement side (advance, or injury = true for Injury cards)",
        [
            "and End of Turn side (remove_intel region, then add_intel cities, then close_airport).",
            "Regions: africa, asia, europe, north_america, south_america, ussr.",
            "[composition] is checked against the cards. Card text is ASSUMED (MODEL.md C):",
            "16 x +2, 14 x +1, 2 x -1, 3 Injury; every card closes one named airport (red",
            "airports are named too: the engine never closes them); 60% add 1 Intel, 40% add 2;",
            "40% also remove all Intel from a region.",
        ],
    )
    out += meta(
        True,
        "MODEL.md section C (assumed cards; 35-card count and +2/+1/-1/Injury kinds published)",
    )
    out += table(
        "composition",
        {"plus_two": 16, "plus_one": 14, "minus_one": 2, "injury": 3, "total": n},
    )
    for i, (kind, adv) in enumerate(kinds):
        e: dict = {"id": i + 1, "advance": adv}
        if kind == "injury":
            e["injury"] = True
        if i in removes:
            e["remove_intel"] = rng.choice(REGIONS)
        e["add_intel"] = rng.sample(CITY_NAMES, 2 if i in adds_two else 1)
        e["close_airport"] = closes[i % len(closes)]
        e["assumed"] = True
        out += "\n" + array_entry("card", e)
    return out


# ------------------------------------------------------------------ lobo
def lobo() -> str:
    out = head(
        "Dr. Lobo's track: start and loss positions, and the Intel needed to win at each position.",
        [
            "W Weapon, T Tech, D Double Agent, A Atomic. Positions below 0 use position 0.",
            "The requirement table is ASSUMED (MODEL.md C); start 0 and loss at 9 are published.",
        ],
    )
    out += meta(False, "Field manual p.4-9; MODEL.md sections A and C")
    out += table("track", {"start": 0, "loss": 9})
    req = ["W", "W", "W T", "W T", "W T D", "W W T D", "W T D A", "W W T D A", "W W T T D A"]
    for p, r in enumerate(req):
        out += "\n" + array_entry("position", {"position": p, "intel": r.split(), "assumed": True})
    return out


# ------------------------------------------------------------------ henchmen
def henchmen() -> str:
    out = head(
        "Henchmen: the four green Location tokens (index = token id) and their tests by level.",
        [
            "Each level offers 1-2 options {skill, modifier, successes}; autopass = advanced skill",
            "that passes the level. Names are published; the tests are ASSUMED (MODEL.md C).",
        ],
    )
    out += meta(False, "Field manual p.2-5 (names); MODEL.md section C (tests, assumed)")
    table_ = [
        ("Darling", "persuasion", "deception", "seduction", True),
        ("Mr. Big", "hand_to_hand", "athletics", "weapons_use", False),
        ("Fedor", "athletics", "hand_to_hand", "speed", False),
        ("Pierre", "spycraft", "deception", "electronics", False),
    ]
    for name, a, b, auto, two_at_one in table_:
        out += "\n" + array_entry("henchman", {"name": name, "assumed": ["level"]})
        lv1 = [{"skill": a, "modifier": 1, "successes": 1}]
        if two_at_one:
            lv1.append({"skill": b, "modifier": 1, "successes": 1})
        levels = [
            (1, lv1, auto),
            (
                2,
                [
                    {"skill": a, "modifier": 0, "successes": 1},
                    {"skill": b, "modifier": 1, "successes": 2},
                ],
                None,
            ),
            (
                3,
                [
                    {"skill": a, "modifier": -1, "successes": 1},
                    {"skill": b, "modifier": 0, "successes": 2},
                ],
                None,
            ),
        ]
        for level, options, autopass in levels:
            e: dict = {"level": level, "options": options}
            if autopass:
                e["autopass"] = autopass
            out += array_entry("henchman.level", e)
    return out


# ------------------------------------------------------------------ characters
def characters() -> str:
    out = head(
        "Characters: basic skills (0..5), Resolve start/max, life points, advanced skills, start space.",
        [
            "start_un: UN Transport tokens at the start; watch: starts with the 'Watch' status card;",
            "gives_un: may hand UN Transport tokens to anyone (and takes the Calli setup exceptions);",
            "reduced_resolve_cut: the smaller Resolve cut of the 5-6 player variant (Rocko).",
            "Names and the special abilities the rulebooks name are published; the numbers,",
            "advanced skills, start spaces and the fifth character's name are ASSUMED (MODEL.md C).",
        ],
    )
    out += meta(False, "Field manual p.3, 9, 12; MODEL.md section C")
    common = ["skills", "resolve_start", "resolve_max", "life", "advanced", "start"]
    rows = [
        (
            "Calli Dagger",
            (2, 2, 2, 1, 1),
            3,
            5,
            4,
            ["seduction", "disguise"],
            "London",
            {"start_un": 1, "gives_un": True},
            common + ["start_un"],
        ),
        (
            "Rocko Jurgen",
            (1, 1, 1, 2, 3),
            2,
            4,
            6,
            ["weapons_use", "adventurer"],
            "Siberia",
            {"reduced_resolve_cut": True},
            common,
        ),
        (
            "Dexter Kane",
            (3, 1, 2, 1, 1),
            3,
            5,
            4,
            ["electronics", "lockpicking"],
            "New York",
            {"watch": True},
            common + ["watch"],
        ),
        ("Nika Shizuka", (1, 1, 2, 3, 2), 3, 5, 5, ["stealth", "speed"], "Japan", {}, common),
        (
            "Agent Five",
            (2, 1, 1, 2, 2),
            3,
            5,
            5,
            ["detection", "driving_piloting"],
            "Congo",
            {},
            ["name"] + common,
        ),
    ]
    for name, skills, rs, rm, life, adv, start, special, assumed in rows:
        e: dict = {
            "name": name,
            "skills": dict(zip(BASIC_SKILLS, skills, strict=True)),
            "resolve_start": rs,
            "resolve_max": rm,
            "life": life,
            "advanced": adv,
            "start": start,
        }
        e.update(special)
        e["assumed"] = assumed
        if name == "Agent Five":
            e["note"] = "the fifth character is unnamed in the rulebooks"
        out += "\n" + array_entry("character", e)
    return out


# ------------------------------------------------------------------ setup
def setup() -> str:
    out = head(
        "Setup by player count (1-6), the variants and the simulator's turn cap.",
        [
            "extra_*: tokens/cards each player gets on top of the character's own;",
            "extra_choice: UN Transport / Top Secret combined, the player picks the split.",
            "Characters with gives_un (Calli) use giver_extra_un / giver_extra_top_secret instead of",
            "extra_un / extra_top_secret, and take at most giver_choice_max_un UN of extra_choice",
            "(99 = no cap). overflow_limit: most yellow tokens allowed on the board.",
            "resolve_cut(_reduced): starting Resolve lost (reduced = characters with",
            "reduced_resolve_cut). rest_roll_die: die rolled when resting (solo), omitted = none.",
            "easier_*: the 'easier game' variant. lineup: default characters (ASSUMED; six players",
            "repeat the first character since only five mats exist).",
        ],
    )
    out += meta(
        False, "Field manual p.3 'Set-Up By Number of Players', p.6, p.12 'Variants'; MODEL.md A"
    )
    lineup = [
        "Calli Dagger",
        "Rocko Jurgen",
        "Dexter Kane",
        "Nika Shizuka",
        "Agent Five",
        "Calli Dagger",
    ]
    for p in range(1, 7):
        e: dict = {
            "players": p,
            "board_intel": {1: 3, 2: 2}.get(p, 0),
            "extra_un": 2 if p == 2 else 0,
            "extra_top_secret": 0,
            "extra_choice": 3 if p == 1 else 0,
            "giver_extra_un": 1 if p == 2 else 0,
            "giver_extra_top_secret": 1 if p == 2 else 0,
            "giver_choice_max_un": 1 if p == 1 else 99,
            "henchmen_level2": {1: 2, 2: 1}.get(p, 0),
            "remove_injury_cards": p <= 2,
            "remove_minus_one": p <= 2,
            "remove_random_plus_one": 3 if p == 1 else 0,
            "resolve_cut": {5: 1, 6: 2}.get(p, 0),
            "resolve_cut_reduced": {6: 1}.get(p, 0),
            "location_target": {1: 3, 2: 4}.get(p, 5),
            "overflow_limit": 5 if p <= 3 else 4,
            "mission_resolve": 2 if p == 1 else 1,
        }
        if p == 1:
            e["rest_roll_die"] = "blue"
        e.update(
            {
                "lineup": lineup[:p],
                "easier_extra_choice": 1 if p in (3, 4) else 0,
                "easier_extra_top_secret": 1 if p == 2 else 0,
                "easier_henchmen_level1": p == 1,
                "assumed": ["lineup"],
            }
        )
        out += "\n" + array_entry("player_count", e)
    out += "\n" + table("variants", {"dirty_lobo_start": 2, "dirty_location_delta": 1})
    out += "\n" + table(
        "simulation",
        {
            "turn_cap": 600,
            "assumed": True,
            "note": "safety cap on total player turns; a game reaching it is a 'timeout'",
        },
    )
    return out


# ------------------------------------------------------------------ top secret
def top_secret() -> str:
    out = head(
        "Top Secret deck: 22 cards (count published), by effect. The mix is ASSUMED (MODEL.md C).",
        [
            "auto_pass: pass one test (not a henchman at level 3); two_dice: +2 dice to a test;",
            "cancel_advance: cancel a villain advancement as drawn; heal_all; un_transport;",
            "intel_to_pool: 1 Intel from the supply into the Pool.",
        ],
    )
    out += meta(True, "MODEL.md section C (assumed mix; 22 cards published)")
    out += table("deck", {"total": 22})
    for effect, count in [
        ("auto_pass", 6),
        ("two_dice", 4),
        ("cancel_advance", 4),
        ("heal_all", 3),
        ("un_transport", 3),
        ("intel_to_pool", 2),
    ]:
        out += "\n" + array_entry("card_type", {"effect": effect, "count": count, "assumed": True})
    return out


# ------------------------------------------------------------------ encounters
REWARDS = [
    ("none", 10),
    ("gain_intel", 16),
    ("top_secret", 12),
    ("gain_resolve", 16),
    ("up_any_skill", 5),
    ("up_skill", 9),
    ("un_transport", 8),
    ("advanced_skill", 5),
    ("named_advanced_skill", 8),
    ("v_minus_1", 7),
]
PENALTIES = [("none", 30), ("injuries", 42), ("lose_intel", 13), ("lower_skill", 15)]


def pick(rng: random.Random, weighted) -> str:
    names = [n for n, _ in weighted]
    weights = [w for _, w in weighted]
    return rng.choices(names, weights)[0]


def effect(rng: random.Random, name: str) -> dict:
    e: dict = {"effect": name}
    if name in ("gain_intel", "lose_intel"):
        e["amount"] = 2 if rng.random() < 0.2 else 1
    elif name in ("gain_resolve", "injuries"):
        e["amount"] = 2 if rng.random() < 0.3 else 1
    elif name in ("up_skill", "lower_skill"):
        e["skill"] = rng.choice(BASIC_SKILLS)
    elif name == "named_advanced_skill":
        e["skill"] = rng.choice(ADVANCED_SKILLS)
    return e


def side(rng: random.Random, harder: bool, gamble: bool, autopass: str | None) -> dict:
    n_opt = 1 if rng.random() < 0.45 else 2
    options = []
    for skill in rng.sample(BASIC_SKILLS, n_opt):
        if harder:
            modifier = rng.choice([-2, -1, -1, 0, 0, 1])
            successes = 2 if rng.random() < 0.22 else 1
        else:
            modifier = rng.choice([-1, 0, 0, 1, 1, 2])
            successes = 2 if rng.random() < 0.12 else 1
        if successes == 2:
            modifier = min(modifier + 1, 2)  # two-success options give a little more dice
        options.append({"skill": skill, "modifier": modifier, "successes": successes})
    s: dict = {"options": options, "gamble": gamble}
    if autopass:
        s["autopass"] = autopass
    s["reward"] = effect(rng, pick(rng, REWARDS))
    s["penalty"] = effect(rng, pick(rng, PENALTIES))
    s["no_advance"] = rng.random() < 0.08
    return s


def encounters() -> str:
    rng = rng_for("encounters")
    per_deck = 18
    out = head(
        "Encounter decks: 6 decks x 18 cards (108 published); card id = file order.",
        [
            "Each card has a No Intel side and a With Intel side: 1-2 test options",
            "{skill, modifier, successes}, gamble (a Gamble option besides the tests), autopass",
            "(advanced skill that passes), reward on a pass, penalty on a fail, and no_advance",
            "('do not advance villain' on a fail). Rewards: none, gain_intel, top_secret,",
            "gain_resolve, up_any_skill, up_skill (skill), un_transport, advanced_skill,",
            "named_advanced_skill (skill), v_minus_1. Penalties: none, lose_intel, injuries,",
            "lower_skill (skill). amount (1-2) defaults to 1.",
            "All card text is ASSUMED (MODEL.md C): With Intel is harder; ocean cards are the",
            "same on both sides; ~1 card in 4 has an auto-pass skill, ~1 in 10 a Gamble option.",
        ],
    )
    out += meta(True, "MODEL.md section C (assumed cards; deck sizes published)")
    out += table("decks", {"cards_per_deck": per_deck})
    for deck in DECKS:
        for k in range(per_deck):
            gamble = rng.random() < 0.1
            autopass = rng.choice(ADVANCED_SKILLS) if rng.random() < 0.25 else None
            no_intel = side(rng, False, gamble, autopass)
            with_intel = no_intel if deck == "ocean" else side(rng, True, gamble, autopass)
            out += "\n" + array_entry(
                "card", {"id": f"{deck}-{k + 1:02d}", "deck": deck, "assumed": True}
            )
            out += table("card.no_intel", no_intel)
            out += table("card.with_intel", with_intel)
    return out


# ------------------------------------------------------------------ fate
def fate() -> str:
    rng = rng_for("fate")
    cities = list(CITY_NAMES)
    rng.shuffle(cities)
    cards = [(r, s) for s in SUITS for r in RANKS]
    out = head(
        "Fate deck: 44 cards, each a city and a playing card (ranks 4..10, J, Q, K, A; 4 suits).",
        [
            "One card per map city (deck.one_per_city). The city on each card is ASSUMED.",
        ],
    )
    out += meta(True, "Field manual p.10-11; MODEL.md section C (assumed city assignment)")
    out += table("deck", {"one_per_city": True})
    for (rank, suit), city in zip(cards, cities, strict=True):
        out += "\n" + array_entry(
            "card", {"city": city, "rank": rank, "suit": suit, "assumed": ["city"]}
        )
    return out


WRITERS = {
    "dice.toml": dice,
    "intel.toml": intel,
    "villain.toml": villain,
    "lobo.toml": lobo,
    "henchmen.toml": henchmen,
    "characters.toml": characters,
    "setup.toml": setup,
    "top_secret.toml": top_secret,
    "encounters.toml": encounters,
    "fate.toml": fate,
    "map.toml": map_,
}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out", type=Path, default=OUT, help="pack folder to write (default: %(default)s)"
    )
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, writer in WRITERS.items():
        text = re.sub(r"\n{3,}", "\n\n", writer())
        (args.out / name).write_text(text, encoding="utf-8")
        print(f"wrote {args.out / name}")


if __name__ == "__main__":
    main()
