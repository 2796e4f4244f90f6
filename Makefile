# The two commands a user needs are `make run` and `make test`; everything
# else here is what they depend on.  Every target installs what it needs.

# The interpreter the virtualenv is made from.  A distribution's python3 (Debian's, Ubuntu's) is
# built with profile-guided optimisation and LTO, where pyenv's default build and a plain
# ./configure are not, and the broker costs markedly more CPU per request on those
# (docs/operations.md, "The Python interpreter"); so the distribution's comes first when it is 3.11
# or newer and can make a virtualenv.  `make PYTHON=...` chooses another.
PYTHON      ?= $(shell /usr/bin/python3 -c 'import sys, ensurepip; sys.exit(sys.version_info < (3, 11))' \
                 2>/dev/null && echo /usr/bin/python3 || echo python3)
VENV        := .venv
# The virtualenv is made again, from nothing, when PYTHON names another interpreter.
VENV_STAMP  := $(VENV)/.created-$(subst /,_,$(shell $(PYTHON) -c 'import os, sys; print(os.path.realpath(sys.executable))'))
PY          := $(VENV)/bin/python
PIP         := $(VENV)/bin/pip
CACHE       := .cache
KAFKA_VERSION := 4.4.0
# Older Java clients kept under test (compat_tests/test_older_java_clients.py): 3.9 is what Spark
# bundles, 4.1.1 the previous pin.
OLDER_JAVA_CLIENTS := 3.9.0 4.1.1
# Connect and MirrorMaker 2 (compat_tests/java/connect/pom.xml says why not KAFKA_VERSION).
CONNECT_VERSION := 4.3.1
JAVA_LIB    := $(CACHE)/java/lib
SPARK_JARS  := $(CACHE)/spark/jars
ZOOKEEPER_LIB := $(CACHE)/zookeeper/lib
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run build test test-rust test-python compat lint java-deps spark-deps system-deps zookeeper-deps tools regen clean
.PHONY: bench bench-quick bench-cluster bench-schema bench-rest bench-fetch-sessions bench-share bench-deps cluster
.PHONY: docs faults faults-short wheel helm-deps kubernetes

# ZooKeeper and three brokers on 127.0.0.1 (configs/cluster/), in the foreground until Ctrl-C.
cluster: build tools
	$(PY) -m pykafkad.dev_cluster --configs configs/cluster --zookeeper-jars $(ZOOKEEPER_LIB)

run: build
	$(VENV)/bin/pykafkad serve configs/server.properties --override metrics.listener=http://127.0.0.1:9644 \
		--override metrics.console.enable=true --override schema.registry.listener=http://127.0.0.1:8081 \
		--override rest.listener=http://127.0.0.1:8082

# --clear empties a virtualenv of another interpreter, but only once PYTHON has started: a PYTHON
# that names no interpreter leaves the old one as it was.
$(VENV_STAMP):
	$(PYTHON) -m venv --clear $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "maturin>=1.5,<2"
	touch $@

# What the Rust extension and the installed package are built from: a change to one of these
# rebuilds; otherwise `make build` (and so `make run`) does nothing.  Python sources need no
# rebuild: maturin installs the package editable.  A build prints one line; maturin's and pip's
# own output goes to $(VENV)/build.log, shown only when the build fails.
BUILD_INPUTS := pyproject.toml Cargo.toml Cargo.lock rust_log/Cargo.toml $(shell find rust_log/src -name '*.rs')

# The project's own bytecode, as an interpreter writes it at a first import: where
# PYTHONDONTWRITEBYTECODE is set (as on the benchmark machine) every broker and tool would otherwise
# compile pykafkad again at each start (about 0.15 s of the 0.7 s it took to import the server).
# Files already compiled are skipped, so this costs nothing when nothing changed.
build: $(VENV)/.built
	@$(PY) -m compileall -q pykafkad wire
$(VENV)/.built: $(VENV_STAMP) $(BUILD_INPUTS)
	@echo "maturin develop --release: building pykafkad's Rust extension (minutes the first time; log in $(VENV)/build.log)"
	@PIP_QUIET=1 VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
		$(VENV)/bin/maturin develop --release --extras test -q >$(VENV)/build.log 2>&1 \
		|| { cat $(VENV)/build.log; exit 1; }
	@touch $@

# Kafka's own Java tools and clients, from Maven Central, for compat tests.
# The directory is emptied first: jars of two releases on one classpath would mix.  The older
# clients (kafka-clients alone, with its compression and logging jars) go to one directory each.
java-deps: $(JAVA_LIB)/.done-$(KAFKA_VERSION) $(foreach v,$(OLDER_JAVA_CLIENTS),$(CACHE)/java/clients-$(v)/.done) \
	$(CACHE)/java/connect-$(CONNECT_VERSION)/.done
$(JAVA_LIB)/.done-$(KAFKA_VERSION): compat_tests/java/pom.xml
	rm -rf $(JAVA_LIB)
	mvn -q -f compat_tests/java/pom.xml dependency:copy-dependencies \
		-Dkafka.version=$(KAFKA_VERSION) -DoutputDirectory=$(abspath $(JAVA_LIB))
	touch $@
$(CACHE)/java/connect-%/.done: compat_tests/java/connect/pom.xml
	rm -rf $(dir $@)
	mvn -q -f compat_tests/java/connect/pom.xml dependency:copy-dependencies -DincludeScope=runtime \
		-Dconnect.version=$* -DoutputDirectory=$(abspath $(dir $@))
	touch $@
$(CACHE)/java/clients-%/.done: compat_tests/java/clients/pom.xml
	rm -rf $(dir $@)
	mvn -q -f compat_tests/java/clients/pom.xml dependency:copy-dependencies -DincludeScope=runtime \
		-Dkafka.version=$* -DoutputDirectory=$(abspath $(dir $@))
	touch $@

# Apache ZooKeeper and its shell from Maven Central, for cluster_tests/ (and `make cluster`).
zookeeper-deps: $(ZOOKEEPER_LIB)/.done
$(ZOOKEEPER_LIB)/.done: cluster_tests/zookeeper/pom.xml
	mvn -q -f cluster_tests/zookeeper/pom.xml dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory=$(abspath $(ZOOKEEPER_LIB))
	touch $@

# Kafka's own command-line tools as scripts named like Kafka's (kafka-topics.sh, ...) in .venv/bin,
# running the jars of java-deps with WARN logging (pykafkad/kafka_tools.py).  Quiet when up to date.
tools: java-deps zookeeper-deps $(VENV)/.built
	@$(PY) -m pykafkad.kafka_tools --jars $(JAVA_LIB) --bin $(VENV)/bin --zookeeper-jars $(ZOOKEEPER_LIB)

# PySpark (the `spark` extra of pyproject.toml, pinned there) and Spark's Kafka connector
# (spark-sql-kafka-0-10_2.13 at the same version, with its own jars) from Maven Central, for
# spark_tests/ and the pipelines.  Spark gets the jars through spark.jars: no ivy at run time.
spark-deps: $(SPARK_JARS)/.done
$(SPARK_JARS)/.done: spark_tests/pom.xml pyproject.toml $(VENV_STAMP)
	$(PIP) install -q $$($(PY) -c "import tomllib; print(' '.join(\
		tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['spark']))")
	rm -rf $(SPARK_JARS)
	mvn -q -f spark_tests/pom.xml dependency:copy-dependencies -DincludeScope=runtime \
		-Dspark.version=$$($(PY) -c "import pyspark; print(pyspark.__version__)") \
		-DoutputDirectory=$(abspath $(SPARK_JARS))
	touch $@

# Debian packages the tests drive: kcat (a client), strace (counts the broker's fsyncs), chromium and
# chromium-driver (the console's browser tests), iproute2 and nftables (the fault injector's network
# namespaces, partitions and slow links), podman, buildah, runc and mmdebstrap (the image built and
# run without a Docker daemon, from a Debian base made here; deploy_tests/).
system-deps:
	@command -v kcat >/dev/null && command -v strace >/dev/null && command -v chromium >/dev/null \
		&& command -v chromedriver >/dev/null && command -v ip >/dev/null && command -v tc >/dev/null \
		&& command -v nft >/dev/null && command -v podman >/dev/null && command -v buildah >/dev/null \
		&& command -v runc >/dev/null && command -v mmdebstrap >/dev/null && command -v iptables >/dev/null || \
		{ $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq kcat strace chromium chromium-driver \
			iproute2 nftables podman buildah runc mmdebstrap uidmap slirp4netns fuse-overlayfs netavark aardvark-dns \
			iptables; }

# helm, built once from the Go module proxy (no release downloads reach this machine), for the
# chart's tests (deploy_tests/test_helm.py) and `make kubernetes`.
HELM_VERSION := v3.22.0
HELM := $(CACHE)/helm/$(HELM_VERSION)/helm
helm-deps: $(HELM)
$(HELM):
	@echo "go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION) (a few minutes the first time)"
	@GOBIN=$(abspath $(dir $(HELM))) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

# deploy/kubernetes/: the chart rendered with its defaults, for users without Helm.
kubernetes: $(HELM)
	$(HELM) template pykafkad deploy/helm/pykafkad --namespace default > deploy/kubernetes/pykafkad.yaml

# The wheel, with the Rust extension inside: `pip install dist/pykafkad-*.whl` (docs/deploy.md).
WHEEL_DIR ?= dist
wheel: $(VENV_STAMP)
	$(VENV)/bin/maturin build --release --locked --out $(WHEEL_DIR)

test: build lint java-deps tools spark-deps zookeeper-deps system-deps helm-deps test-rust test-python

# The dev profile: its build from nothing takes about a minute where the release profile's takes
# three and a half on 2 cores (the tests then run in seconds either way), and it checks overflows.
test-rust:
	cargo test -q -p rust_log

# Two workers, one test module each at a time: the suite waits on clients, JVMs and brokers more
# than it computes (one worker keeps 0.7-1.1 of the 2 cores busy), and two take about 25 minutes
# where one takes 42-48 (conftest.py decides what may not run side by side; docs/development.md).
# `make test PYTEST_WORKERS=` runs on one.
PYTEST_WORKERS ?= -n 2 --dist loadfile --no-loadscope-reorder
test-python:
	JAVA_LIB=$(abspath $(JAVA_LIB)) SPARK_JARS_DIR=$(abspath $(SPARK_JARS)) ZOOKEEPER_LIB=$(abspath $(ZOOKEEPER_LIB)) \
		JAVA_CLIENTS_DIR=$(abspath $(CACHE)/java) JAVA_CONNECT_LIB=$(abspath $(CACHE)/java/connect-$(CONNECT_VERSION)) HELM=$(abspath $(HELM)) $(PY) -m pytest -q $(PYTEST_WORKERS)

# kafka-python's own integration tests (from its sdist, fetched into $(CACHE)/suites) against pykafkad;
# fails if a test on compat_tests/suites/kafka_python/allowlist.txt does not pass.  Against the pinned Kafka
# ($(KAFKA_VERSION)): $(PY) -m compat_tests.suites.kafka_python.run --broker kafka (see FINDINGS.md there).
compat: build java-deps
	JAVA_LIB=$(abspath $(JAVA_LIB)) $(PY) -m compat_tests.suites.kafka_python.run --broker pykafkad

# Part of `make test` (so of CI): the style rules hold on every commit that lands.
lint: build
	$(VENV)/bin/ruff check pykafkad wire compat_tests cluster_tests spark_tests benchmarks deploy_tests conftest.py
	cargo clippy -q -p rust_log -- -D warnings

# Regenerate wire/messages from the pinned kafka-clients jar.
regen: $(VENV_STAMP)
	$(PY) -m wire.codegen --kafka-version $(KAFKA_VERSION)

# docs/configuration.md from pykafkad/config.py's key table (pykafkad/tests/test_config_reference.py
# fails when it is stale).
docs: $(VENV)/.built
	$(PY) -m pykafkad.config_reference docs/configuration.md

# pykafkad against Apache Kafka 4.4.0 (fetched by the harness from Maven Central into
# .cache/bench; the benchmarks' release, newer than the protocol pin KAFKA_VERSION): writes benchmarks/RESULTS.md and benchmarks/results.png.  bench-quick runs a
# subset on small sizes (under 5 minutes) into .cache/bench/quick/.
bench-deps: build
	$(PIP) install -q $$($(PY) -c "import tomllib; print(' '.join(\
		tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['bench']))")

bench: bench-deps
	$(PY) -m benchmarks --profile full

bench-quick: bench-deps
	$(PY) -m benchmarks --profile quick

# Three pykafkad brokers on ZooKeeper against a three-node KRaft Kafka (benchmarks/cluster.py):
# writes the "Three-broker cluster" section of benchmarks/RESULTS.md.
bench-cluster: bench-deps zookeeper-deps
	$(PY) -m benchmarks.cluster

# Produce throughput with broker-side schema validation off, id and full, Avro and JSON, against Kafka
# 4.4.0 (benchmarks/schema_validation.py): writes the "What schema validation costs" section.
bench-schema: bench-deps
	$(PY) -m benchmarks.schema_validation

# HTTP through the REST proxy against native librdkafka, on one broker (benchmarks/rest_proxy.py):
# writes the "What the REST proxy costs" section of benchmarks/RESULTS.md.  About 3 minutes.
bench-rest: bench-deps
	$(PY) -m benchmarks.rest_proxy

# Broker CPU per fetch of a Java consumer idling on 1,000 partitions, fetch sessions on and off,
# pykafkad and Kafka 4.4.0 (benchmarks/fetch_sessions.py; figures in benchmarks/NOTES.md).
bench-fetch-sessions: bench-deps
	$(PY) -m benchmarks.fetch_sessions

# A work queue on a share group: acknowledged records/s of four librdkafka ShareConsumers, pykafkad
# against Kafka 4.4.0 (benchmarks/share_groups.py): writes the "Share groups: a work queue" section
# of benchmarks/RESULTS.md.  A few minutes.
bench-share: bench-deps
	$(PY) -m benchmarks.share_groups

# Restart after kill -9 of a broker holding a 10 GB partition, pykafkad against Kafka 4.4.0
# (benchmarks/recovery.py): writes the last section of benchmarks/RESULTS.md.  Needs ~16 GB free.
bench-recovery: bench-deps
	$(PY) -m benchmarks.recovery

# The fault injector (cluster_tests/faults/, docs/faults.md): FAULTS_DURATION seconds of a seeded random
# fault schedule against three pykafkad brokers on ZooKeeper, then the same schedule against three
# Apache Kafka 4.4.0 KRaft nodes (the benchmarks' jars), then docs/faults.md from both results.  Needs root (network
# namespaces, tmpfs).  A seed reruns a schedule: make faults FAULTS_SEED=1234 FAULTS_DURATION=600.
FAULTS_DURATION ?= 1800
# Simply expanded: both runs get the same seed.
ifndef FAULTS_SEED
FAULTS_SEED := $(shell date +%s)
endif
# The short fixed-seed schedule (cluster_tests/faults/test_fault_schedule.py, about five minutes): every
# fault kind once against three pykafkad brokers, the history checked.  Left out of make test.
faults-short: build java-deps zookeeper-deps system-deps
	JAVA_LIB=$(abspath $(JAVA_LIB)) ZOOKEEPER_LIB=$(abspath $(ZOOKEEPER_LIB)) \
		$(PY) -m pytest -q -m long_run cluster_tests/faults/test_fault_schedule.py

faults: build java-deps zookeeper-deps system-deps
	JAVA_LIB=$(abspath $(JAVA_LIB)) ZOOKEEPER_LIB=$(abspath $(ZOOKEEPER_LIB)) \
		$(PY) -m cluster_tests.faults run --broker pykafkad --seed $(FAULTS_SEED) --duration $(FAULTS_DURATION); \
		status=$$?; \
	JAVA_LIB=$(abspath $(JAVA_LIB)) $(PY) -m cluster_tests.faults run --broker kafka --seed $(FAULTS_SEED) \
		--duration $(FAULTS_DURATION); \
	$(PY) -m cluster_tests.faults report; exit $$status

clean:
	rm -rf $(VENV) target $(CACHE) dist
