# The two commands of the README: `make run` (main job) and `make test` (whole suite).
# Both create the virtual environment in .venv if needed and install the project into it.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test bench bench-full env clean-env

env: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[all]"
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m infpush_cvx.cli check

test: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadgroup

# Quick versions of every benchmark (minutes); bench-full runs the sizes quoted in the README.
bench: $(STAMP)
	$(PY) benchmarks/bench_prox.py --quick
	$(PY) benchmarks/bench_solvers.py --quick
	$(PY) benchmarks/bench_scale.py --quick
	$(PY) benchmarks/bench_ranksvm.py --quick
	$(PY) benchmarks/bench_queries.py --quick
	$(PY) benchmarks/bench_query_infinite_push.py --quick
	$(PY) benchmarks/bench_time_limits.py --quick
	$(PY) benchmarks/bench_rank2plan.py --quick
	$(PY) benchmarks/bench_metrics.py --n 100000
	$(PY) benchmarks/bench_formulations.py --sizes 100 300

bench-full: $(STAMP)
	$(PY) benchmarks/bench_prox.py
	$(PY) benchmarks/bench_solvers.py
	$(PY) benchmarks/bench_scale.py
	$(PY) benchmarks/bench_ranksvm.py
	$(PY) benchmarks/bench_queries.py
	$(PY) benchmarks/bench_query_infinite_push.py
	$(PY) benchmarks/bench_time_limits.py
	$(PY) benchmarks/bench_rank2plan.py
	$(PY) benchmarks/bench_metrics.py
	$(PY) benchmarks/bench_formulations.py

clean-env:
	rm -rf $(VENV)
