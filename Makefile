# The course's commands. `make lab` opens the course, `make test` runs every check.
# Both create the virtual environment in .venv the first time.

VENV := .venv
PYTHON := $(VENV)/bin/python
# nbgrader runs `alembic` and `jupyter` by name: the environment's bin/ must come first.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)


.PHONY: help lab test check lint format execute release readme site new benchmark grade clean system-packages publish-check hub hub-packages colab-runtime mutants

help:
	@echo "make lab        open the course in JupyterLab (creates .venv the first time)"
	@echo "make test       lint + the whole test suite (what CI runs)"
	@echo "make check NB=03_matrix_form   the checks of one notebook: anatomy, release, its"
	@echo "                grading cases' round trip, nbval (minutes; the suite: 28-34 on 2 cores)"
	@echo "make execute NB=01_vector_sets   re-run a solution notebook, storing its outputs"
	@echo "make release    regenerate notebooks/ from solutions/ (nbgrader generate_assignment),"
	@echo "                then the self-study edition self_study/ (instructor.self_study)"
	@echo "make readme     regenerate the README's course table from course.toml"
	@echo "make publish-check   print the install source and badges (course.toml's repository"
	@echo "                and ref) and ask GitHub whether the ref is published (docs/publishing.md)"
	@echo "make site       the course as a static website -> _site/ (open _site/index.html)"
	@echo "make new NB=10_topic TITLE=\"Title\"   a new notebook from the template"
	@echo "make grade A=\"01_vector_sets 02_soft_select\"   grade every submission (sandboxed, parallel)"
	@echo "make hub        the course's JupyterHub on 127.0.0.1:8000 (hub/roster.toml's accounts)"
	@echo "make mutants    mutate every graded answer, run the tests on each -> benchmarks/mutants.md"
	@echo "make benchmark  time every notebook and its autograde -> benchmarks/notebooks.md,"
	@echo "                and attention against length (notebook 06) -> benchmarks/efficient_attention.md"

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e ".[dev]"
	touch $@

# Jupyter refuses to run as root (containers, CI machines) unless told it may.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(VENV)/.installed
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $(ALLOW_ROOT)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

format: $(VENV)/.installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# Debian packages some tests need: bubblewrap (the grading sandbox), chromium (the browser
# test), postgresql (the shared-gradebook test). Installed where apt-get can (root or
# password-less sudo); elsewhere those tests skip and say why.
SYSTEM_PACKAGES := bubblewrap chromium postgresql
APT := $(if $(filter 0,$(shell id -u)),apt-get,$(if $(shell sudo -n true 2>/dev/null && echo y),sudo -n apt-get))

system-packages:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ -n "$(APT)" ] && command -v apt-get >/dev/null; then \
	  echo "installing $$missing"; \
	  $(APT) install -y -q $$missing >/dev/null 2>&1 || \
	  { $(APT) update -q >/dev/null 2>&1 && $(APT) install -y -q $$missing >/dev/null 2>&1; } || \
	  echo "could not install $$missing: the tests that need them will skip"; \
	else echo "no apt-get (or no root): $$missing not installed, the tests that need them will skip"; fi

# Colab's pinned runtime for the Colab and widget tests (tests/support/colab_image.py, standard
# library only), in pytest's cache folder: the first test that needs it would build it otherwise.
colab-runtime:
	python3 tests/support/colab_image.py

# The set-up steps side by side (-j): the install of .venv and the runtime's are one pip run
# each, one core each. Then one session: nbval's notebooks (a group each, tests/conftest.py)
# fill the workers' last minutes.
test:
	@$(MAKE) --no-print-directory -j4 lint system-packages hub-packages colab-runtime
	$(PYTHON) -m pytest -n auto --dist loadgroup --durations=30 tests \
	  --nbval --nbval-current-env --nbval-cell-timeout=120 solutions

# The fast loop while editing one notebook: every test of tests/course/ whose id names it
# (anatomy, release, messages, times, its grading cases graded both ways, its site page),
# then nbval on it. `make test` still runs everything before a commit.
check: $(VENV)/.installed
	@test -n "$(NB)" || (echo "usage: make check NB=03_matrix_form" && exit 2)
	@test -f solutions/$(NB)/$(NB).ipynb || (echo "no solutions/$(NB)/$(NB).ipynb" && exit 2)
	$(VENV)/bin/ruff check solutions/$(NB)
	$(PYTHON) -m pytest -n auto --dist loadgroup tests/course -k "$(NB)"
	$(PYTHON) -m pytest --nbval --nbval-current-env --nbval-cell-timeout=120 solutions/$(NB)

execute: $(VENV)/.installed
	@test -n "$(NB)" || (echo "usage: make execute NB=01_vector_sets" && exit 2)
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.record_timing=False --ExecutePreprocessor.store_widget_state=False solutions/$(NB)/$(NB).ipynb

# The notebooks the registry (course.toml) lists, in order; first the functions' points and the
# notebooks' times (instructor.facts), the README's table, and the badge and set-up cell of
# every solution notebook from course.toml (repository, ref, colab_packages); last the
# self-study edition, self_study/, from solutions/ and notebooks/ (instructor.self_study;
# with self_study = false in course.toml it removes self_study/ instead).
release: $(VENV)/.installed
	$(PYTHON) -m instructor.facts
	$(PYTHON) -m instructor.readme
	$(PYTHON) -m instructor.colab sync
	cd autograder && for nb in $$($(CURDIR)/$(PYTHON) -m instructor.registry ids); do \
	  nbgrader generate_assignment $$nb --force || exit 1; done
	$(PYTHON) -m instructor.self_study

# The README's course table, from the registry (course.toml).
readme: $(VENV)/.installed
	$(PYTHON) -m instructor.readme

# Where students get the course (course.toml's repository and ref): the install source, every
# badge's address, and whether GitHub has the tag (`git ls-remote`; needs the network).
publish-check: $(VENV)/.installed
	$(PYTHON) -m instructor.colab publish-check

# The course as a static website for self-learners: the student's view of every notebook,
# with the stored outputs (nothing is executed), built by Sphinx + MyST-NB into _site/.
site: $(VENV)/.installed
	$(PYTHON) -m instructor.site

# A new notebook from the template: solution notebook, registry entry, grading-cases stub,
# executed and released. Usage: make new NB=10_transformer TITLE="The Transformer block"
new: $(VENV)/.installed
	@test -n "$(NB)" || (echo 'usage: make new NB=10_topic TITLE="Title"' && exit 2)
	$(PYTHON) -m instructor.new_notebook $(NB) --title "$(TITLE)"
	$(PYTHON) -m instructor.facts $(NB)
	$(MAKE) execute NB=$(NB)
	cd autograder && nbgrader generate_assignment $(NB) --force
	$(PYTHON) -m instructor.self_study $(NB)
	$(MAKE) readme

# Mutation analysis (issue 45): every graded function's reference solution mutated, each
# mutant run in-process against its test cells -> benchmarks/mutants.md (about 30 s).
mutants: $(VENV)/.installed
	$(PYTHON) -m instructor.mutation

benchmark: $(VENV)/.installed
	$(PYTHON) -m instructor.benchmark_attention
	$(PYTHON) -m instructor.benchmark_notebooks
	$(PYTHON) -m instructor.benchmark_rnn_vs_attention
	$(PYTHON) -m instructor.benchmark_loop_rule
	$(PYTHON) -m instructor.benchmark_class_grading

# The course's JupyterHub on http://127.0.0.1:8000 (docs/jupyterhub.md): the accounts of
# hub/roster.toml, nbgrader's exchange, formgrader; as root, real system users. Ctrl-C stops it.
hub: $(VENV)/.installed hub-packages
	$(PYTHON) -m instructor.hub

# configurable-http-proxy, JupyterHub's proxy, from hub/package-lock.json with the system's
# npm (Node.js >= 20); without npm, the hub test skips and says why.
hub-packages:
	@if ! command -v npm >/dev/null; then echo "no npm: the hub test will skip (docs/jupyterhub.md)"; \
	elif [ ! hub/node_modules/.installed -nt hub/package-lock.json ]; then \
	  (cd hub && npm ci --no-audit --no-fund --loglevel=error) && touch hub/node_modules/.installed; fi

grade: $(VENV)/.installed
	@test -n "$(A)" || (echo 'usage: make grade A="01_vector_sets 02_soft_select"' && exit 2)
	$(PYTHON) -m instructor.classroom grade $(A)

clean:
	rm -rf autograder/submitted autograder/autograded autograder/feedback autograder/gradebook.db autograder/.grading autograder/reports
