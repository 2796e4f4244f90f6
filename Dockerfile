# syntax=docker/dockerfile:1
# pykafkad's container image: the broker with its console, schema registry and REST proxy.
#
#   docker build -t pykafkad .            (or: podman build --format docker -t pykafkad .)
#   docker run -p 9092:9092 -e KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://localhost:9092 pykafkad
#
# BASE and BUILDER_BASE name the two Debian images; a build without access to a public registry
# passes local ones (--build-arg BASE=localhost/debian:bookworm ...). docs/deploy.md says more.
ARG BUILDER_BASE=debian:bookworm
ARG BASE=debian:bookworm-slim

# -- the wheel, with the Rust extension inside, built by maturin ----------------------------------
FROM ${BUILDER_BASE} AS builder
# Debian 12's rustc-web is a Rust recent enough for the extension (>= 1.85); Debian 13's rustc is too.
RUN apt-get update \
    && rust=$(apt-cache show rustc-web >/dev/null 2>&1 && echo "rustc-web cargo-web" || echo "rustc cargo") \
    && apt-get install -y --no-install-recommends $rust python3 python3-venv python3-dev gcc libc6-dev \
       ca-certificates \
    && apt-get clean && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/maturin && /opt/maturin/bin/pip install --no-cache-dir "maturin>=1.5,<2"
WORKDIR /src
COPY pyproject.toml Cargo.toml Cargo.lock README.md LICENSE ./
COPY rust_log rust_log
COPY wire wire
COPY pykafkad pykafkad
# The crates and the compiled Rust kept between builds on one machine: a change to the Python
# sources alone then links the extension again without compiling it.
RUN --mount=type=cache,target=/root/.cargo/registry --mount=type=cache,target=/src/target \
    /opt/maturin/bin/maturin build --release --locked --interpreter /usr/bin/python3 --out /dist

# -- the broker: Python, the wheel and its dependencies; nothing to compile -----------------------
FROM ${BASE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv tini ca-certificates \
    && apt-get clean && rm -rf /var/lib/apt/lists/*
COPY --from=builder /dist /tmp/dist
RUN python3 -m venv /opt/pykafkad \
    && /opt/pykafkad/bin/pip install --no-cache-dir /tmp/dist/pykafkad-*.whl \
    && rm -rf /tmp/dist \
    && groupadd --gid 1000 pykafkad \
    && useradd --uid 1000 --gid 1000 --home-dir /var/lib/pykafkad --no-create-home --shell /usr/sbin/nologin pykafkad \
    && mkdir -p /var/lib/pykafkad/data \
    && chown -R pykafkad:pykafkad /var/lib/pykafkad
COPY deploy/docker/server.properties /etc/pykafkad/server.properties
COPY --chmod=0755 deploy/docker/entrypoint.sh /usr/local/bin/pykafkad-entrypoint
ENV PATH=/opt/pykafkad/bin:$PATH PYTHONUNBUFFERED=1
USER pykafkad
WORKDIR /var/lib/pykafkad
VOLUME /var/lib/pykafkad
# Kafka, metrics and console, schema registry, REST proxy.
EXPOSE 9092 9644 8081 8082
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9644/readyz', timeout=4)"
# tini as PID 1 passes SIGTERM on to the broker, whose shutdown is then the controlled one.
ENTRYPOINT ["tini", "--", "pykafkad-entrypoint"]
