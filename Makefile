# Two commands do all the set-up: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/coworkenv demo

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# setuptools maps the top-level folders into the `coworkenv` namespace; mypy cannot follow
# that mapping, so it checks a tree of symlinks laid out the way the package installs.
typecheck: $(STAMP)
	rm -rf .typecheck && mkdir -p .typecheck/coworkenv
	for f in coworkenv/*.py; do ln -s ../../$$f .typecheck/coworkenv/; done
	for d in state servers verifiers rollout synth; do ln -s ../../$$d .typecheck/coworkenv/$$d; done
	MYPYPATH=.typecheck $(BIN)/mypy -p coworkenv

pytest: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .typecheck build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
