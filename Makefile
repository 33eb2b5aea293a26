# The two commands a new machine needs are `make demo` and `make test`; each installs what it uses.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# `lint` runs the clone check only when a source file changed since it last passed (it costs
# ~16 s of CPU: astroid parsing all of src/); `make clones` always runs it
CLONES_STAMP := $(VENV)/.clones-ok
export WLMAP_CACHE ?= $(HOME)/.cache/workload-map

.PHONY: venv tools gojq apiserver helm operators prometheus monitoring-crds chromium image-tools deploy test unit lint format demo demo-cluster bench fuzz crd clean image image-lock dist

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

gojq:  ## the jq oracle for differential tests (github.com/itchyny/gojq v0.12.18)
	bash hack/install-gojq.sh

apiserver:  ## kube-apiserver, -controller-manager, -scheduler + etcd from their Go modules, cached outside the checkout
	bash hack/build-apiserver.sh

helm:  ## helm (helm.sh/helm/v3, pinned) from its Go module, for the chart tests
	bash hack/build-helm.sh

operators:  ## KubeRay, the Kubeflow training operator, scheduler-plugins, JobSet, Kubeflow Trainer v2 from their Go modules (gang e2e tests)
	bash hack/build-operators.sh kuberay training-operator scheduler-plugins jobset trainer

prometheus:  ## Debian's prometheus + promtool for the exporter's tests (apt as root; else says how)
	bash hack/install-prometheus.sh

monitoring-crds:  ## the Prometheus Operator's ServiceMonitor/PrometheusRule CRDs, from its Go module
	bash hack/fetch-monitoring-crds.sh

chromium:  ## Debian's chromium + DejaVu fonts for the web view's browser tests (apt as root)
	bash hack/install-chromium.sh

image-tools:  ## Debian's skopeo (checks the image archive) and util-linux (the image test's sandbox)
	bash hack/install-apt-packages.sh skopeo util-linux mount

tools: gojq apiserver helm operators prometheus monitoring-crds chromium image-tools

deploy: helm  ## regenerate deploy/workload-map.yaml from charts/workload-map
	bash hack/render-deploy.sh

# hack/run-tests.py: the unit tier in parallel processes (pytest-xdist; PYTEST_WORKERS, default
# one per core), then the integration tier in two processes (PYTEST_INTEGRATION_WORKERS); each
# prints pytest's summary, a last line adds them up, and either failing fails the run.
# PYTEST_ARGS go to both tiers.
PYTEST_ARGS ?=

test: venv tools lint  ## lint, then every test, the real API server ones included
	$(PY) hack/run-tests.py $(PYTEST_ARGS)

unit: venv  ## the fast tests only (no API server), in parallel processes
	$(PY) hack/run-tests.py --tier unit $(PYTEST_ARGS)

# hack/localkube (the harness the integration tests and `make demo-cluster` share) is linted
# with the package; the other hack/ scripts are one-off tools outside the checked paths
LINT_PATHS := src tests benchmarks hack/__init__.py hack/localkube hack/demo-cluster.py

lint: venv $(CLONES_STAMP)
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)
	$(VENV)/bin/mypy

format: venv
	$(VENV)/bin/ruff format $(LINT_PATHS)
	$(VENV)/bin/ruff check --fix $(LINT_PATHS)

demo: venv
	bash hack/demo.sh

# The whole system live on this machine (hack/demo-cluster.py): a local control plane with fake
# GPU nodes, the operator with gang scheduling and metrics, Prometheus and the web view; a gang
# held while short and bound once a node is added. Needs the binaries of `make apiserver` and
# Debian's prometheus (`make prometheus`); it says which is missing. Ctrl-C stops everything.
# DEMO_ARGS=--once stops by itself once everything was shown.
DEMO_ARGS ?=
demo-cluster: venv
	$(PY) hack/demo-cluster.py $(DEMO_ARGS)

# The operator image as an OCI archive (dist/workload-map-operator-VERSION.oci.tar), built
# without a container daemon from image/debian.lock and image/requirements.lock
# (hack/build-image.py); `make image-lock` moves those pins to the current versions.
image: venv
	$(PY) hack/build-image.py

image-lock: venv
	$(PY) hack/lock-image.py

dist: venv  ## wheel + sdist in dist/, twine check, installed into a clean venv and run
	PY=$(PY) bash hack/dist.sh

fuzz: venv  ## the jq grammar fuzzer, long round: no crash, no deadline overrun beyond 2x, bounded memory
	$(PY) -m tests.jq.fuzz --count $${FUZZ_COUNT:-300000} --seed $${FUZZ_SEED:-1} --deadline 0.5 --factor 2

bench: venv  ## live start-up is compared with kubectl v1.37.2 (built once, cached, for bench only)
	$(PY) -m pip install -q -e '.[bench]'
	WLMAP_EXTRA_TOOLS=kubectl bash hack/build-apiserver.sh
	$(PY) benchmarks/run.py

crd: venv  ## regenerate deploy/crds/kartas.run.ai.yaml (and the chart's copy) from the model
	$(PY) -m workload_map.model.crd > deploy/crds/kartas.run.ai.yaml
	cp deploy/crds/kartas.run.ai.yaml charts/workload-map/crds/kartas.run.ai.yaml

.PHONY: catalog-bundle
catalog-bundle: venv  ## regenerate catalog/data/bundle.jsonl (the JSON the CLI reads) from the catalog's YAML
	$(PY) -c 'from workload_map.catalog.bundle import main; raise SystemExit(main())'

# the clone detector: blocks of more than 6 similar lines anywhere in src/ (imports, docstrings,
# comments and signatures ignored); what stays below that is listed in docs/engine.md
CLONES := $(VENV)/bin/pylint --disable=all --enable=duplicate-code --min-similarity-lines=6 \
	  --ignore-imports=y --ignore-docstrings=y --ignore-comments=y --ignore-signatures=y \
	  src/workload_map
.PHONY: clones
clones: venv
	$(CLONES)

$(CLONES_STAMP): $(STAMP) $(shell find src/workload_map -name '*.py')
	$(CLONES)
	@touch $@

.PHONY: schemas
schemas: venv  ## regenerate schemas/*.schema.json (the machine outputs' contract) from the typed views
	$(PY) -m workload_map.cli.schemas --out schemas

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
