"""The content pack: the default pack's data, the loader's checks, the hash."""

from __future__ import annotations

import copy
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import sim.content as sc
from sim.content import DEFAULT_PACK, Content, ContentError, build, load, load_raw
from sim.content import constants as K


@pytest.fixture(scope="module")
def content() -> Content:
    return load()


# ------------------------------------------------------------------ helpers
def pack_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "pack"
    shutil.copytree(DEFAULT_PACK, dst)
    return dst


def edit(tmp_path: Path, file: str, old: str, new: str, after: str | None = None) -> Path:
    """Copy the default pack and replace the first ``old`` (after ``after``) in ``file``."""
    pack = pack_copy(tmp_path)
    f = pack / file
    text = f.read_text()
    start = text.index(after) if after is not None else 0
    i = text.index(old, start)
    f.write_text(text[:i] + new + text[i + len(old) :])
    return pack


def drop_block(tmp_path: Path, file: str, marker: str) -> Path:
    """Copy the default pack and delete the ``[[card]]``-style block starting at ``marker``."""
    pack = pack_copy(tmp_path)
    f = pack / file
    text = f.read_text()
    i = text.index(marker)
    j = text.find("\n[[", i + len(marker))
    f.write_text(text[:i] + (text[j + 1 :] if j >= 0 else ""))
    return pack


def expect(pack: Path, file: str, entry: str | None, *reason: str) -> ContentError:
    with pytest.raises(ContentError) as info:
        load(pack)
    err = info.value
    msg = str(err)
    assert err.file == file, msg
    assert msg.startswith(file), msg
    if entry is not None:
        assert err.entry == entry, msg
        assert entry in msg
    for r in reason:
        assert r in err.reason, msg
    return err


# ------------------------------------------------------------------ default pack
def test_default_pack_loads(content):
    assert content.name == "default"
    assert content.path == DEFAULT_PACK
    assert len(content.hash) == 64 and content.short_hash == content.hash[:12]
    assert sc.load(None).hash == content.hash


def test_dice_as_published(content):
    assert content.die_names == ("yellow", "black", "red", "green", "blue", "brown")
    assert content.always_die == 0
    assert content.bag_dice.tolist() == [1, 2, 3, 4, 5]
    assert content.die_success.sum(axis=1).tolist() == [1, 4, 3, 3, 2, 1]
    assert content.die_injury.sum(axis=1).tolist() == [1, 2, 0, 2, 0, 0]
    assert content.die_injury[1].max() == 2  # Black's double injury face
    assert content.die_heal.sum(axis=1).tolist() == [1, 0, 0, 0, 0, 0]
    assert content.die_success.shape == (6, 6)
    assert content.die_index("blue") == 4


def test_counts(content):
    # intel 8/5/4/3
    assert content.intel_type_names == K.INTEL_TYPES
    assert np.bincount(content.intel_token_type).tolist() == [8, 5, 4, 3]
    assert content.intel_token_type.tolist() == sorted(content.intel_token_type.tolist())
    assert content.n_un_transport == 8 and content.n_close_airport_tokens == 24
    # villain deck 35: 16 x +2, 14 x +1, 2 x -1, 3 Injury
    adv, inj = content.villain_advance, content.villain_injury
    assert adv.shape == (35,)
    assert Counter(adv[~inj].tolist()) == {2: 16, 1: 14, -1: 2}
    assert inj.sum() == 3 and (adv[inj] == 0).all()
    assert (content.villain_close_city >= 0).all()
    assert content.space_airport[content.villain_close_city].all()
    assert content.space_red_airport[content.villain_close_city].sum() >= 3
    n_add = (content.villain_add_intel >= 0).sum(axis=1)
    assert set(n_add.tolist()) == {1, 2} and (n_add == 2).sum() == 14
    assert (content.villain_remove_region >= 0).sum() == 18  # "most" End of Turn events remove Intel
    assert (content.villain_remove_region == K.USSR_REGION).any() or True
    # fate 44: 44 distinct cities, 11 x 4 distinct cards
    assert content.fate_city.shape == (44,)
    assert len(set(content.fate_city.tolist())) == 44
    assert (content.space_kind[content.fate_city] == K.CITY).all()
    assert len(set(zip(content.fate_rank.tolist(), content.fate_suit.tolist(), strict=True))) == 44
    assert sorted(set(content.fate_rank.tolist())) == list(range(4, 15))
    assert sorted(set(content.fate_suit.tolist())) == [0, 1, 2, 3]
    # top secret 22: 6/4/4/3/3/2
    assert np.bincount(content.top_secret_effect).tolist() == [6, 4, 4, 3, 3, 2]
    # encounters 6 x 18
    assert content.encounter_deck.shape == (108,)
    assert np.bincount(content.encounter_deck).tolist() == [18] * 6
    assert len(set(content.encounter_ids)) == 108
    assert content.encounter_option_skill.shape == (108, 2, 2)


def test_lobo(content):
    assert content.lobo_start == 0 and content.lobo_loss == 9
    req = content.lobo_intel_required
    assert req.shape == (9, 4)
    assert req[0].tolist() == [1, 0, 0, 0]
    assert req[5].tolist() == [2, 1, 1, 0]
    assert req[8].tolist() == [2, 2, 1, 1]


def test_henchmen(content):
    assert content.henchman_names == ("Darling", "Mr. Big", "Fedor", "Pierre")
    assert content.henchman_option_skill.shape == (4, 3, 2)
    assert content.henchman_autopass.shape == (4, 3)
    # Darling level 1: Persuasion +1 [1] or Deception +1 [1]; Seduction passes
    d = content.henchman_index("Darling")
    assert content.henchman_option_skill[d, 0].tolist() == [1, 2]
    assert content.henchman_option_modifier[d, 0].tolist() == [1, 1]
    assert content.henchman_autopass[d].tolist() == [K.ADVANCED_SKILLS.index("seduction"), -1, -1]
    # Mr. Big level 1 has one option; level 3: Hand-to-hand -1 [1] or Athletics +0 [2]
    b = content.henchman_index("Mr. Big")
    assert content.henchman_option_skill[b, 0].tolist() == [4, -1]
    assert content.henchman_option_successes[b, 0].tolist() == [1, 0]
    assert content.henchman_option_modifier[b, 2].tolist() == [-1, 0]
    assert content.henchman_option_successes[b, 2].tolist() == [1, 2]


def test_characters(content):
    assert content.character_names == (
        "Calli Dagger",
        "Rocko Jurgen",
        "Dexter Kane",
        "Nika Shizuka",
        "Agent Five",
    )
    assert content.character_skills.shape == (5, 5)
    calli = content.character_index("Calli Dagger")
    assert content.character_skills[calli].tolist() == [2, 2, 2, 1, 1]
    assert content.character_resolve_start.tolist() == [3, 2, 3, 3, 3]
    assert content.character_resolve_max.tolist() == [5, 4, 5, 5, 5]
    assert content.character_life.tolist() == [4, 6, 4, 5, 5]
    assert content.character_advanced.shape == (5, 11)
    assert content.character_advanced.sum(axis=1).tolist() == [2] * 5
    starts = [content.space_names[i] for i in content.character_start_space]
    assert starts == ["London", "Siberia", "New York", "Japan", "Congo"]
    assert content.character_start_un.tolist() == [1, 0, 0, 0, 0]
    watch = content.status_index("watch")
    assert [watch in row for row in content.character_start_status.tolist()] == [False, False, True, False, False]
    assert content.character_gives_un.tolist() == [True, False, False, False, False]
    assert content.character_reduced_resolve_cut.tolist() == [False, True, False, False, False]


def test_setup(content):
    c = content
    assert c.setup_board_intel.tolist() == [0, 3, 2, 0, 0, 0, 0]
    assert c.setup_extra_un.tolist() == [0, 0, 2, 0, 0, 0, 0]
    assert c.setup_extra_choice.tolist() == [0, 3, 0, 0, 0, 0, 0]
    assert c.setup_giver_extra_un[2] == 1 and c.setup_giver_extra_top_secret[2] == 1
    assert c.setup_giver_choice_max_un[1] == 1
    assert c.setup_henchmen_level2.tolist() == [0, 2, 1, 0, 0, 0, 0]
    assert c.setup_remove_injury_cards.tolist() == [False, True, True, False, False, False, False]
    assert c.setup_remove_random_plus_one.tolist() == [0, 3, 0, 0, 0, 0, 0]
    assert c.setup_resolve_cut.tolist() == [0, 0, 0, 0, 0, 1, 2]
    assert c.setup_resolve_cut_reduced.tolist() == [0, 0, 0, 0, 0, 0, 1]
    assert c.setup_location_target.tolist() == [0, 3, 4, 5, 5, 5, 5]
    assert c.setup_overflow_limit.tolist() == [0, 5, 5, 5, 4, 4, 4]
    assert c.setup_mission_resolve.tolist() == [0, 2, 1, 1, 1, 1, 1]
    assert c.setup_rest_roll_die.tolist() == [-1, c.die_index("blue"), -1, -1, -1, -1, -1]
    assert c.setup_lineup.shape == (7, 6)
    for p in range(1, 7):
        assert (c.setup_lineup[p, :p] >= 0).all() and (c.setup_lineup[p, p:] == -1).all()
    assert c.setup_lineup[6].tolist() == [0, 1, 2, 3, 4, 0]
    assert c.easier_extra_choice.tolist() == [0, 0, 0, 1, 1, 1, 1]
    assert c.easier_extra_top_secret.tolist() == [0, 0, 1, 0, 0, 0, 0]
    assert c.easier_henchmen_level1.tolist() == [False, True, False, False, False, False, False]
    assert c.dirty_lobo_start == 2 and c.dirty_location_delta == 1
    assert c.turn_cap >= 100


def test_encounter_shape_of_content(content):
    c = content
    opts = c.encounter_option_successes > 0
    assert (opts.sum(axis=2) >= 1).all()  # every side has 1-2 options
    assert set(c.encounter_option_successes[opts].tolist()) <= {1, 2}
    assert set(c.encounter_option_modifier[opts].tolist()) <= set(range(-2, 3))
    assert (c.encounter_option_skill[~opts] == -1).all()
    ocean = c.encounter_deck == K.OCEAN_DECK
    for arr in (c.encounter_option_skill, c.encounter_reward, c.encounter_penalty, c.encounter_henchman):
        assert (arr[ocean, 0] == arr[ocean, 1]).all()
    for code in c.encounter_reward.ravel():
        assert K.EFFECTS[code] in K.REWARD_EFFECTS
    for code in c.encounter_penalty.ravel():
        assert K.EFFECTS[code] in K.PENALTY_EFFECTS
    up = c.encounter_reward == K.E_UP_SKILL
    assert (c.encounter_reward_skill[up] >= 0).all()
    assert (c.encounter_reward_skill[c.encounter_reward == K.E_GAIN_INTEL] == -1).all()
    assert 0.1 < (c.encounter_autopass[:, 0] >= 0).mean() < 0.4
    assert 0.02 < c.encounter_gamble[:, 0].mean() < 0.25
    assert 0.0 < c.encounter_no_advance.mean() < 0.2


def test_arrays_read_only_and_int64(content):
    n_arrays = 0
    for name, value in vars(content).items():
        if isinstance(value, np.ndarray):
            n_arrays += 1
            assert not value.flags.writeable, name
            assert value.dtype in (np.int64, np.bool_), name
    assert n_arrays > 60
    with pytest.raises(ValueError):
        content.villain_advance[0] = 5
    with pytest.raises(AttributeError):
        content.turn_cap = 1


def test_numba_reads_arrays(content):
    from numba import njit

    @njit(cache=False)
    def total(a, b):
        return a.sum() + b[0, 0]

    assert total(content.villain_advance, content.hop_distance) == content.villain_advance.sum()


def test_map(content):
    c = content
    n = c.n_spaces
    assert c.n_cities == 44
    city = c.space_kind == K.CITY
    ocean = c.space_kind == K.OCEAN
    regional = c.space_kind == K.REGIONAL
    # cities first, then oceans, then regional areas
    assert c.space_kind.tolist() == sorted(c.space_kind.tolist())
    assert 8 <= ocean.sum() <= 10
    assert {c.space_names[i] for i in np.flatnonzero(regional)} == {
        "Siberia",
        "Northern Territories",
        "Japan",
        "Congo",
    }
    # every city and ocean reachable from every other
    walk = city | ocean
    assert (c.hop_distance[np.ix_(walk, walk)] < Content.UNREACHABLE).all()
    # regional areas cannot be entered, but can be left
    assert not c.adjacent[:, regional].any()
    assert c.adjacent[regional].any(axis=1).all()
    assert (c.hop_distance[np.ix_(regional, walk)] < Content.UNREACHABLE).all()
    # undirected between cities and oceans
    sub = c.adjacent[np.ix_(walk, walk)]
    assert (sub == sub.T).all()
    assert not c.adjacent.diagonal().any()
    # CSR matches the matrix
    assert c.neighbor_start.shape == (n + 1,)
    for i in range(n):
        row = c.neighbor_list[c.neighbor_start[i] : c.neighbor_start[i + 1]]
        assert row.tolist() == np.flatnonzero(c.adjacent[i]).tolist()
    # continents and the USSR
    assert (c.space_deck[ocean] == K.OCEAN_DECK).all()
    assert set(c.space_deck[city].tolist()) == set(range(5))
    assert (c.space_deck[c.space_ussr] == K.DECKS.index("asia")).all()
    assert ((c.space_kind == K.CITY) & c.space_ussr & c.space_train).sum() >= 5
    assert (c.space_kind[c.space_train] == K.CITY).all()
    # airports
    assert 0.7 <= c.space_airport[city].mean() < 1.0
    assert 3 <= c.space_red_airport.sum() <= 8
    assert not (c.space_red_airport & ~c.space_airport).any()
    assert not c.space_airport[~city].any()
    assert c.space_index("London") == 0
    with pytest.raises(ContentError, match="Atlantis"):
        c.space_index("Atlantis")
    with pytest.raises(ContentError):
        c.character_index("James Bond")
    with pytest.raises(ContentError):
        c.henchman_index("Oddjob")
    with pytest.raises(ContentError):
        c.die_index("purple")


def test_assumed_tags(content):
    a = content.assumed
    assert a == tuple(sorted(a))
    assert "villain.toml:card 17" in a
    assert "encounters.toml:card 'africa-07'" in a
    assert "setup.toml:simulation" in a
    assert any(x.startswith("dice.toml:die 'black'") for x in a)
    # the faces the rulebook does not print: Black and Green's sixth, Red, Blue and Brown's blanks
    for die in ("black", "red", "green", "blue", "brown"):
        assert any(x.startswith(f"dice.toml:die '{die}' (faces") for x in a), die
    assert not any(x.startswith("dice.toml:die 'yellow'") for x in a)
    assert any(x.startswith("characters.toml:character 'Agent Five' (name") for x in a)
    # every file carries its [meta] tag and a header comment
    for f in sorted(DEFAULT_PACK.glob("*.toml")):
        assert f.read_text().startswith("# "), f.name
    for name, data in load_raw().items():
        assert isinstance(data["meta"]["assumed"], bool) and data["meta"]["source"], name


# ------------------------------------------------------------------ hash
def test_hash_stable_and_sensitive(tmp_path, content):
    assert load().hash == content.hash
    pack = pack_copy(tmp_path)
    assert load(pack).hash == content.hash  # same data, other folder
    f = pack / "villain.toml"
    f.write_text("# a designer's remark\n" + f.read_text().replace("\n\n", "\n\n\n", 3))
    assert load(pack).hash == content.hash  # comments and blank lines do not count
    s = pack / "setup.toml"
    s.write_text(s.read_text().replace("turn_cap = 600", "turn_cap = 601"))
    changed = load(pack)
    assert changed.hash != content.hash and changed.turn_cap == 601


def test_build_from_patched_raw(content):
    raw = load_raw()
    raw["lobo.toml"]["track"]["start"] = 1
    patched = build(raw, path=DEFAULT_PACK)
    assert patched.lobo_start == 1 and patched.hash != content.hash
    assert load_raw()["lobo.toml"]["track"]["start"] == 0
    raw["villain.toml"]["card"][16]["close_airport"] = "Atlantis"
    with pytest.raises(ContentError) as info:
        build(raw)
    assert str(info.value) == "villain.toml: card 17: close_airport names unknown city 'Atlantis'"


# ------------------------------------------------------------------ malformed packs
def test_missing_file(tmp_path):
    pack = pack_copy(tmp_path)
    (pack / "fate.toml").unlink()
    expect(pack, "fate.toml", None, "missing")


def test_malformed_toml_has_line_and_column(tmp_path):
    pack = edit(tmp_path, "lobo.toml", "loss = 9", "loss = = 9")
    err = expect(pack, "lobo.toml", None, "malformed TOML")
    line = (pack / "lobo.toml").read_text().splitlines().index("loss = = 9") + 1
    assert re.search(rf"line {line}, column \d+", str(err)), str(err)


def test_missing_pack_folder(tmp_path):
    with pytest.raises(ContentError, match="does not exist"):
        load(tmp_path / "nowhere")
    (tmp_path / "a_file").write_text("")
    with pytest.raises(ContentError, match=r"content pack folder '.*a_file' is a file, not a folder$"):
        load(tmp_path / "a_file")


@pytest.mark.parametrize(
    ("file", "old", "new", "after", "entry", "reason"),
    [
        # dice
        (
            "dice.toml",
            '"S", "S", "S", "-", "-", "-"]',
            '"S", "S", "S", "-", "-"]',
            'name = "red"',
            "die 'red'",
            ["6 faces", "got 5"],
        ),
        (
            "dice.toml",
            '"S", "S", "-"',
            '"S", "X", "-"',
            'name = "blue"',
            "die 'blue'",
            ["unknown face code 'X'"],
        ),
        (
            "dice.toml",
            "in_bag = true",
            "in_bag = false",
            'name = "brown"',
            "die",
            ["exactly one die"],
        ),
        (
            "dice.toml",
            'assumed = ["faces"]',
            'assumed = ["fases"]',
            None,
            "die 'black'",
            ["assumed names unknown field 'fases'"],
        ),
        # intel
        ("intel.toml", "atomic = 3", "atomic = 4", None, "tokens", ["sum to 21", "total = 20"]),
        (
            "intel.toml",
            "atomic = 3",
            "atomic = 3\nbiological = 1",
            None,
            "tokens",
            ["biological: unknown key"],
        ),
        # villain
        (
            "villain.toml",
            "close_airport = ",
            'close_airport = "Atlantis"\nx = ',
            "id = 17\n",
            "card 17",
            ["unknown key"],
        ),
        (
            "villain.toml",
            "advance = 2",
            "advance = 1",
            None,
            "composition",
            ["plus_two = 16", "15"],
        ),
        ("villain.toml", "advance = 1", "advance = 3", None, None, ["advance must be"]),
        (
            "villain.toml",
            "add_intel = [",
            'remove_intel = "atlantis"\nadd_intel = [',
            "id = 3\n",
            "card 3",
            ["unknown region 'atlantis'"],
        ),
        ("villain.toml", "id = 5\n", "id = 4\n", None, "card 4", ["duplicate card id"]),
        # lobo
        ("lobo.toml", "position = 8", "position = 9", None, "position 9", ["outside the track"]),
        # henchmen
        (
            "henchmen.toml",
            "successes = 1",
            "successes = 3",
            None,
            "henchman 'Darling'",
            ["successes: must be 1 or 2"],
        ),
        (
            "henchmen.toml",
            'options = [{skill = "hand_to_hand", modifier = 1, successes = 1}]',
            "options = []",
            'name = "Mr. Big"',
            "henchman 'Mr. Big'",
            ["1 to 2 test options"],
        ),
        (
            "henchmen.toml",
            'options = [{skill = "athletics", modifier = 1, successes = 1}]',
            'options = [{skill = "athletics", modifier = 1}, {skill = "spycraft", modifier = 1}, '
            '{skill = "deception", modifier = 1}]',
            'name = "Fedor"',
            "henchman 'Fedor'",
            ["1 to 2 test options", "got 3"],
        ),
        (
            "henchmen.toml",
            "level = 3",
            "level = 4",
            'name = "Pierre"',
            "henchman 'Pierre'",
            ["exactly levels [1, 2, 3]"],
        ),
        (
            "henchmen.toml",
            'skill = "spycraft"',
            'skill = "spycrft"',
            'name = "Pierre"',
            "henchman 'Pierre'",
            ["unknown basic skill 'spycrft'"],
        ),
        (
            "henchmen.toml",
            'name = "Fedor"',
            'name = "Darling"',
            None,
            "henchman 'Darling'",
            ["duplicate henchman name"],
        ),
        # characters
        (
            "characters.toml",
            "hand_to_hand = 3",
            "hand_to_hand = 6",
            None,
            "character 'Rocko Jurgen'",
            ["hand_to_hand = 6", "0..5"],
        ),
        (
            "characters.toml",
            "resolve_start = 3",
            "resolve_start = 6",
            None,
            "character 'Calli Dagger'",
            ["resolve_start 6", "resolve_max"],
        ),
        (
            "characters.toml",
            "life = 5",
            "life = 0",
            'name = "Nika Shizuka"',
            "character 'Nika Shizuka'",
            ["life: must be at least 1"],
        ),
        (
            "characters.toml",
            '"seduction"',
            '"charm"',
            None,
            "character 'Calli Dagger'",
            ["unknown advanced skill 'charm'"],
        ),
        (
            "characters.toml",
            "persuasion = 1",
            "persuasionn = 1",
            'name = "Dexter Kane"',
            "character 'Dexter Kane'",
            ["unknown basic skill 'persuasionn'"],
        ),
        (
            "characters.toml",
            'start = "Japan"',
            'start = "Atlantis"',
            None,
            "character 'Nika Shizuka'",
            ["unknown space 'Atlantis'"],
        ),
        (
            "characters.toml",
            'name = "Agent Five"',
            'name = "Calli Dagger"',
            None,
            "character 'Calli Dagger'",
            ["duplicate character name"],
        ),
        # setup
        (
            "setup.toml",
            '"Rocko Jurgen"]',
            '"Rocky"]',
            None,
            "player_count 2",
            ["unknown character 'Rocky'"],
        ),
        (
            "setup.toml",
            'rest_roll_die = "blue"',
            'rest_roll_die = "purple"',
            None,
            "player_count 1",
            ["unknown die 'purple'"],
        ),
        # top secret
        ("top_secret.toml", "count = 6", "count = 7", None, "deck", ["sum to 23", "total = 22"]),
        (
            "top_secret.toml",
            'effect = "heal_all"',
            'effect = "self_destruct"',
            None,
            "card_type 'self_destruct'",
            ["unknown Top Secret effect"],
        ),
        # encounters
        (
            "encounters.toml",
            'skill = "',
            'skill = "karate',
            'id = "europe-03"',
            "card 'europe-03'",
            ["unknown basic skill 'karate"],
        ),
        (
            "encounters.toml",
            "modifier = ",
            "modifier = 9 + ",
            'id = "asia-02"',
            None,
            ["malformed TOML"],
        ),
        (
            "encounters.toml",
            "successes = 1",
            "successes = 0",
            'id = "asia-05"',
            "card 'asia-05'",
            ["successes: must be 1 or 2"],
        ),
        (
            "encounters.toml",
            "reward = {",
            "x = 1\nreward = {",
            'id = "ocean-04"',
            "card 'ocean-04'",
            ["no_intel.x: unknown key"],
        ),
        (
            "encounters.toml",
            'id = "africa-09"',
            'id = "africa-08"',
            None,
            "card 'africa-08'",
            ["duplicate card id"],
        ),
        (
            "encounters.toml",
            'deck = "asia"',
            'deck = "oceania"',
            None,
            None,
            ["unknown deck 'oceania'"],
        ),
        # fate
        ("fate.toml", 'suit = "clubs"', 'suit = "stars"', None, None, ["unknown suit 'stars'"]),
        ("fate.toml", 'rank = "4"', 'rank = "2"', None, None, ["unknown rank '2'"]),
        # map
        (
            "map.toml",
            '"Paris", "Madrid"',
            '"Paris", "Atlantis"',
            None,
            "connections",
            ["unknown space 'Atlantis'"],
        ),
        (
            "map.toml",
            '"Paris", "Madrid"',
            '"Paris", "Congo"',
            None,
            "connections",
            ["regional area"],
        ),
        (
            "map.toml",
            'name = "Dakar"\ncontinent = "africa"\nairport = false',
            'name = "Dakar"\ncontinent = "africa"\nairport = false\nred_airport = true',
            None,
            "city 'Dakar'",
            ["red_airport", "without an airport"],
        ),
        (
            "map.toml",
            'cities = ["Moscow"',
            'cities = ["North Pacific", "Moscow"',
            None,
            "railway",
            ["'North Pacific' is not a city"],
        ),
        (
            "map.toml",
            'continent = "europe"',
            'continent = "atlantis"',
            None,
            "city 'London'",
            ["unknown continent 'atlantis'"],
        ),
        (
            "map.toml",
            'exits = ["Lagos", "Nairobi", "Johannesburg"]',
            "exits = []",
            None,
            "regional 'Congo'",
            ["at least 1"],
        ),
        (
            "map.toml",
            'exits = ["Lagos",',
            'exits = ["Siberia", "Lagos",',
            None,
            "regional 'Congo'",
            ["exit into regional area 'Siberia'"],
        ),
        (
            "map.toml",
            'name = "Lima"',
            'name = "Bogota"',
            None,
            "space 'Bogota'",
            ["duplicate space name"],
        ),
        (
            "map.toml",
            'continent = "europe"',
            'continent = "europe"\nussr = true',
            None,
            "city 'London'",
            ["USSR city counts as Asia"],
        ),
    ],
)
def test_malformed_pack(tmp_path, file, old, new, after, entry, reason):
    expect(edit(tmp_path, file, old, new, after), file, entry, *reason)


def test_villain_close_airport_unknown_city(tmp_path):
    pack = edit(
        tmp_path, "villain.toml", "close_airport = ", 'close_airport = "Atlantis"\n#', "id = 17\n"
    )
    err = expect(pack, "villain.toml", "card 17", "close_airport names unknown city 'Atlantis'")
    assert str(err) == "villain.toml: card 17: close_airport names unknown city 'Atlantis'"


def test_villain_close_airport_needs_airport_and_city(tmp_path):
    pack = edit(
        tmp_path, "villain.toml", "close_airport = ", 'close_airport = "Havana"\n#', "id = 2\n"
    )
    expect(pack, "villain.toml", "card 2", "'Havana'", "no airport")
    pack = edit(
        tmp_path / "b", "villain.toml", "add_intel = [", 'add_intel = ["Indian Ocean", ', "id = 9\n"
    )
    expect(pack, "villain.toml", "card 9", "add_intel", "'Indian Ocean'", "not a city")


def test_villain_deck_wrong_total(tmp_path):
    pack = drop_block(tmp_path, "villain.toml", "[[card]]\nid = 35\n")
    expect(pack, "villain.toml", "composition", "total = 35", "34 cards")


def test_villain_composition_declared_wrong(tmp_path):
    pack = edit(
        tmp_path, "villain.toml", "plus_two = 16\nplus_one = 14", "plus_two = 14\nplus_one = 16"
    )
    expect(pack, "villain.toml", "composition", "plus_two = 14", "16 such cards")


def test_lobo_table_must_cover_track(tmp_path):
    pack = drop_block(tmp_path, "lobo.toml", "[[position]]\nposition = 8\n")
    expect(pack, "lobo.toml", "position", "0..8", "missing [8]")


def test_setup_duplicate_row(tmp_path):
    pack = pack_copy(tmp_path)
    f = pack / "setup.toml"
    text = f.read_text().replace("players = 2\n", "players = 1\n", 1)
    f.write_text(
        text.replace(
            'lineup = ["Calli Dagger", "Rocko Jurgen"]\n', 'lineup = ["Calli Dagger"]\n', 1
        )
    )
    expect(pack, "setup.toml", "player_count 1", "duplicate row")
    f.write_text(text)
    expect(pack, "setup.toml", "player_count 1", "lineup has 2 characters for 1 player")


def test_setup_row_missing(tmp_path):
    pack = drop_block(tmp_path, "setup.toml", "[[player_count]]\nplayers = 4\n")
    expect(pack, "setup.toml", "player_count", "missing setup rows", "[4]")


def test_encounter_deck_wrong_size(tmp_path):
    pack = drop_block(tmp_path, "encounters.toml", '[[card]]\nid = "south_america-18"')
    expect(pack, "encounters.toml", "deck 'south_america'", "17 cards", "cards_per_deck = 18")
    pack = edit(tmp_path / "b", "encounters.toml", "cards_per_deck = 18", "cards_per_deck = 20")
    expect(pack, "encounters.toml", "deck 'africa'", "18 cards", "cards_per_deck = 20")


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        ('penalty = {effect = "', 'penalty = {effect = "gain_resolve", x = "', "unknown key"),
        (
            "penalty = {",
            'penalty = {effect = "gain_resolve"}\n#',
            "'gain_resolve' is a reward, not a penalty",
        ),
        (
            "reward = {",
            'reward = {effect = "injuries", amount = 1}\n#',
            "'injuries' is a penalty, not a reward",
        ),
        ("reward = {", 'reward = {effect = "up_skill"}\n#', "'up_skill' needs a named basic skill"),
        (
            "reward = {",
            'reward = {effect = "named_advanced_skill"}\n#',
            "needs a named advanced skill",
        ),
        (
            "penalty = {",
            'penalty = {effect = "lower_skill"}\n#',
            "'lower_skill' needs a named basic skill",
        ),
        (
            "reward = {",
            'reward = {effect = "up_skill", skill = "stealth"}\n#',
            "unknown basic skill 'stealth'",
        ),
        ("reward = {", 'reward = {effect = "gain_intel", amount = 3}\n#', "amount must be 1 or 2"),
        ("reward = {", 'reward = {effect = "top_secret", skill = "stealth"}\n#', "takes no skill"),
        ("gamble = ", 'autopass = "kung_fu"\ngamble = ', "unknown advanced skill 'kung_fu'"),
    ],
)
def test_bad_encounter_effects(tmp_path, old, new, reason):
    pack = edit(tmp_path, "encounters.toml", old, new, 'id = "north_america-06"')
    expect(pack, "encounters.toml", "card 'north_america-06'", reason)


def test_fate_city_checks(tmp_path):
    text = (DEFAULT_PACK / "fate.toml").read_text()
    first = re.search(r'city = "([^"]+)"', text).group(1)
    pack = edit(tmp_path / "a", "fate.toml", f'city = "{first}"', 'city = "Atlantis"')
    expect(pack, "fate.toml", "card 'Atlantis'", "unknown city 'Atlantis'")
    pack = edit(tmp_path / "b", "fate.toml", f'city = "{first}"', 'city = "Arctic Ocean"')
    expect(pack, "fate.toml", "card 'Arctic Ocean'", "not a city")
    second = re.findall(r'city = "([^"]+)"', text)[1]
    pack = edit(tmp_path / "c", "fate.toml", f'city = "{first}"', f'city = "{second}"')
    expect(pack, "fate.toml", f"card '{second}'", "city named on two Fate cards")
    pack = edit(
        tmp_path / "d", "fate.toml", 'rank = "5"\nsuit = "clubs"', 'rank = "4"\nsuit = "clubs"'
    )
    expect(pack, "fate.toml", None, "duplicate playing card 4 of clubs")
    # a map city that no Fate card names
    pack = drop_block(tmp_path / "e", "fate.toml", f'[[card]]\ncity = "{first}"')
    expect(pack, "fate.toml", f"city '{first}'", "no Fate card")


def test_unreachable_city(tmp_path):
    pack = pack_copy(tmp_path)
    f = pack / "map.toml"
    lines = [
        ln for ln in f.read_text().splitlines() if not ('"Havana"' in ln and ln.startswith("    ["))
    ]
    f.write_text("\n".join(lines) + "\n")
    expect(pack, "map.toml", "city 'Havana'", "not reachable")


def test_errors_carry_attributes():
    err = ContentError("x.toml", "card 1", "bad")
    assert isinstance(err, ValueError)
    assert (err.file, err.entry, err.reason) == ("x.toml", "card 1", "bad")
    assert str(err) == "x.toml: card 1: bad"


# ------------------------------------------------------------------ the Fate deck's size
def fate_pack(tmp_path: Path, n: int) -> Path:
    """A copy of the default pack whose Fate deck keeps only its first ``n`` cards."""
    pack = pack_copy(tmp_path)
    f = pack / "fate.toml"
    head, *cards = f.read_text().split("[[card]]")
    f.write_text("[[card]]".join([head.replace("one_per_city = true", "one_per_city = false"), *cards[:n]]))
    return pack


@pytest.mark.filterwarnings("ignore::sim.content.UnprintedValueWarning")
def test_fate_deck_must_serve_a_gamble(tmp_path):
    # 9 cards: the kernel played on past the end of the deck, the reference engine stopped at
    # "bound must be positive, got 0" and `odds gamble` ended in a traceback
    for n in (9, 14):
        err = expect(fate_pack(tmp_path / str(n), n), "fate.toml", "card",
                     f"the deck has {n} Fate cards, but a game needs at least 15",
                     "a Gamble", "5 cards to the player, up to 5 more in the exchange for 1 Resolve and 5 to the House")
        assert "sides of encounters.toml offer one" in err.reason
    assert load(fate_pack(tmp_path / "15", 15)).n_fate == 15


def _without_gambles(raw: dict, n_fate: int) -> dict:
    raw = copy.deepcopy(raw)
    for card in raw["encounters.toml"]["card"]:
        for side in ("no_intel", "with_intel"):
            card[side]["gamble"] = False
            if not card[side]["options"]:
                card[side]["options"] = [{"skill": "stealth", "modifier": 0}]
    raw["fate.toml"]["deck"]["one_per_city"] = False
    raw["fate.toml"]["card"] = raw["fate.toml"]["card"][:n_fate]
    return raw


def test_fate_deck_must_serve_the_secret_missions_of_six_players():
    # without a Gamble the secret missions bind: 6 players hold 12 cards and one more city is
    # drawn while they do (10 to 12 cards: "Fate deck exhausted" in 6-player games)
    raw = load_raw()
    for n in (10, 12):
        with pytest.raises(ContentError) as info:
            build(_without_gambles(raw, n), DEFAULT_PACK)
        err = info.value
        assert (err.file, err.entry) == ("fate.toml", "card"), str(err)
        assert f"the deck has {n} Fate cards, but a game needs at least 13: 6 players hold 12 as secret missions" \
               in err.reason, str(err)
    assert build(_without_gambles(raw, 13), DEFAULT_PACK).n_fate == 13


def test_fate_cards_needed():
    from sim.content.loader import fate_cards_needed

    assert [fate_cards_needed(0, p)[0] for p in range(1, 7)] == [3, 5, 7, 9, 11, 13]
    assert [fate_cards_needed(1, p)[0] for p in range(1, 7)] == [15] * 6


@pytest.mark.filterwarnings("ignore::sim.content.UnprintedValueWarning")
def test_the_smallest_fate_deck_plays_six_players_on_both_engines(tmp_path):
    import sim

    c = load(fate_pack(tmp_path, 15))
    for engine in ("kernel", "reference"):
        r = sim.simulate(players=6, games=30, seed=3, content=c, engine=engine, summary_only=True)
        assert r["games"] == 30 and r["timeouts"] == 0


@pytest.mark.parametrize("argv", [["play", "--players", "1", "--games", "10"],
                                  ["play", "--players", "1", "--games", "10", "--engine", "reference"],
                                  ["odds", "gamble", "--samples", "100"]])
def test_a_short_fate_deck_is_refused_by_the_cli_in_one_line(tmp_path, argv, capsys):
    from sim.cli import main

    with pytest.raises(SystemExit) as info:
        main([*argv, "--content", str(fate_pack(tmp_path, 9))])
    assert str(info.value).startswith("content error: fate.toml: card: the deck has 9 Fate cards, but a game needs "
                                      "at least 15"), info.value
    assert "Traceback" not in capsys.readouterr().err
