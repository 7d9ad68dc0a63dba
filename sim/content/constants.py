"""Fixed vocabularies and enum codes shared by the content pack, the engines and strategies.

Content files name things with these strings; the loader turns them into the
integer codes below, which is what the kernel sees.
"""

BASIC_SKILLS = ("spycraft", "persuasion", "deception", "athletics", "hand_to_hand")
ADVANCED_SKILLS = (
    "gambling_luck",
    "driving_piloting",
    "stealth",
    "seduction",
    "speed",
    "weapons_use",
    "lockpicking",
    "electronics",
    "adventurer",
    "detection",
    "disguise",
)
GAMBLING_LUCK = 0

INTEL_TYPES = ("weapon", "tech", "double_agent", "atomic")
INTEL_LETTERS = ("W", "T", "D", "A")

# Encounter decks, also each space's "continent" code (ocean spaces use the ocean deck).
DECKS = ("africa", "asia", "europe", "north_america", "south_america", "ocean")
OCEAN_DECK = 5
# Regions named by End of Turn "remove Intel" events: the five continents and the USSR
# (USSR cities also count as Asia).
REGIONS = ("africa", "asia", "europe", "north_america", "south_america", "ussr")
USSR_REGION = 5

# Space kinds on the map.
CITY, OCEAN, REGIONAL = 0, 1, 2
SPACE_KINDS = ("city", "ocean", "regional")

# Die faces.
FACE_CODES = ("S", "I", "II", "H", "-")

# Where "Flip Up 1 or 2 Intel Anywhere" looks first (encounters.toml [readings] flip_anywhere).
FLIP_ANYWHERE_READINGS = ("pool", "board")
FLIP_POOL_FIRST, FLIP_BOARD_FIRST = range(2)

# Encounter sides.
NO_INTEL, WITH_INTEL = 0, 1

# Reward / penalty effects (the rulebook Appendix, as modelled).
EFFECTS = (
    "none",
    "gain_intel",  # amount 1-2 Intel from supply to the Pool
    "top_secret",  # draw a Top Secret card
    "gain_resolve",  # amount 1-2
    "up_any_skill",  # player chooses a basic skill, +1
    "up_skill",  # named basic skill +1
    "un_transport",  # gain a UN Transport token
    "advanced_skill",  # player chooses an advanced skill
    "named_advanced_skill",  # the named advanced skill
    "v_minus_1",  # shuffle the cards next to Dr. Lobo, discard one at random
    "flip_pool",  # amount 1-2 face-down Intel tokens in the Pool flipped face up
    "flip_anywhere",  # amount 1-2 face-down Intel tokens in the Pool, on the map or in the supply
    "lose_intel",  # amount 1-2 Intel removed from the Pool (to the supply, or out of the game: [readings] lost_intel)
    "injuries",  # amount 1-2 injuries
    "lower_skill",  # named basic skill -1
    "status",  # the named status card (card = "<id>"); a reward or a penalty
    "random_status",  # reward: a random status card that is not negative
    "random_negative_status",  # penalty: a random negative status card
)
REWARD_EFFECTS = frozenset(
    {
        "none",
        "gain_intel",
        "top_secret",
        "gain_resolve",
        "up_any_skill",
        "up_skill",
        "un_transport",
        "advanced_skill",
        "named_advanced_skill",
        "v_minus_1",
        "flip_pool",
        "flip_anywhere",
        "status",
        "random_status",
    }
)
PENALTY_EFFECTS = frozenset({"none", "lose_intel", "injuries", "lower_skill", "status", "random_negative_status"})
(
    E_NONE,
    E_GAIN_INTEL,
    E_TOP_SECRET,
    E_GAIN_RESOLVE,
    E_UP_ANY_SKILL,
    E_UP_SKILL,
    E_UN_TRANSPORT,
    E_ADVANCED_SKILL,
    E_NAMED_ADVANCED_SKILL,
    E_V_MINUS_1,
    E_FLIP_POOL,
    E_FLIP_ANYWHERE,
    E_LOSE_INTEL,
    E_INJURIES,
    E_LOWER_SKILL,
    E_STATUS,
    E_RANDOM_STATUS,
    E_RANDOM_NEGATIVE_STATUS,
) = range(len(EFFECTS))

# Status cards (status.toml): polarity, and the effect a card has while its holder keeps it.
STATUS_POLARITIES = ("positive", "negative", "third_person")
POSITIVE, NEGATIVE, THIRD_PERSON = range(3)
STATUS_EFFECTS = (
    "none",  # no modelled effect (flavour only)
    "skill_modifier",  # amount (+/-) dice on the tests of the named basic skill
    "extra_move",  # +1 movement point when walking (does not stack)
    "injury_protection",  # cancels up to amount injuries of the next hit, then is discarded
    "resolve",  # amount Resolve (+/-) once, when the card is gained
    "lose_turn",  # the holder's next turn is lost (villain phase only), then the card is discarded
    "watch",  # look at the top villain card once per turn (Dexter's Watch)
)
(
    SE_NONE,
    SE_SKILL_MODIFIER,
    SE_EXTRA_MOVE,
    SE_INJURY_PROTECTION,
    SE_RESOLVE,
    SE_LOSE_TURN,
    SE_WATCH,
) = range(len(STATUS_EFFECTS))
EXTRA_MP = 1  # the movement points an extra_move card adds (walking only)
STATUS_IN_DECK, STATUS_REMOVED = -1, -2  # where a status card no player holds is
# status.toml [readings]: a negative card with no copy left (FAQ 2: "lower_skill"; the Status
# Deck paragraph's general rule: "top_secret_or_resolve"), and where discarded cards go
UNAVAILABLE_NEGATIVE_READINGS = ("lower_skill", "top_secret_or_resolve")
STATUS_DISCARD_READINGS = ("deck", "removed")
MAX_START_STATUS = 4  # status cards a character may start with

# Top Secret card effects.
TOP_SECRET_EFFECTS = (
    "auto_pass",  # pass one test automatically (not a henchman at level 3)
    "two_dice",  # add two dice to a test
    "cancel_advance",  # cancel one villain advancement as it is drawn
    "heal_all",  # heal all injuries
    "un_transport",  # acts as a UN Transport token
    "intel_to_pool",  # put 1 Intel from the supply into the Pool
)
TS_AUTO_PASS, TS_TWO_DICE, TS_CANCEL_ADVANCE, TS_HEAL_ALL, TS_UN_TRANSPORT, TS_INTEL_TO_POOL = range(6)

MAX_PLAYERS = 6
MAX_OPTIONS = 2  # test options per encounter side / henchman level
HENCHMAN_LEVELS = 3

# --- integer codes of the game state and the choices ------------------------------------
# One home for both engines: sim.rules' enums take their values from here, and the
# kernel compares against these names.
# Where a token is: a space index (>= 0) or one of these.
SUPPLY, POOL, REMOVED = -1, -2, -3
DEFEATED = 4  # a henchman's level after his defeat at level 3
# How a game ended (sim.rules.state.Outcome); -1 in the kernel's state while it runs.
WIN_LOCATION, WIN_HENCHMEN, LOSS_LOBO, LOSS_INTEL, TIMEOUT = range(5)
# How a player moves (sim.rules.choices.Means), and the movement points of a turn.
M_STAY, M_WALK, M_PLANE, M_UN, M_UN_GIFT, M_TOP_SECRET_UN = range(6)
BASE_MP = 2
# What to do on a space with tokens (sim.rules.choices.TokenChoice).
T_NO_INTEL, T_HENCHMAN, T_POOL, T_EXCHANGE = range(4)
# Secret-mission reward kinds (sim.rules.choices.Reward).
R_TOP_SECRET, R_RESOLVE, R_UN, R_SKILL, R_DISCARD_STATUS = range(5)
# Cards a gamble may exchange: free, with Gambling Luck, and for 1 Resolve.
FREE_EXCHANGE, LUCK_EXCHANGE, RESOLVE_EXCHANGE = 1, 2, 5
