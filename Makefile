# Two commands a newcomer needs: `make run` (default balance study) and `make test`.
# Both create .venv and install the project into it by themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test check lint clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

# The default balance study: win rate by player count for the built-in strategies.
run: $(STAMP)
	$(BIN)/smersh-sim run experiments/player_count.toml

# One test process per core, at most 4 (pytest-xdist); tests/conftest.py compiles the kernel once before they start.
# The 15 slowest tests are listed at the end (the suite's time is a budget: about 10 minutes on 2 cores).
# make reports any failing recipe as its own status 2, so pytest's 5 (it collected no tests: a failure,
# not a pass) is said here, where it is still known.
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --durations=15 || { rc=$$?; [ $$rc -ne 5 ] || \
	  echo "make test: pytest collected no tests (exit status 5): a failure, not a pass" >&2; exit $$rc; }

check: $(STAMP)
	$(BIN)/smersh-sim check experiments/bands.toml

lint: $(STAMP)
	$(BIN)/ruff check sim strategies tests tools

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
