#!/bin/sh
# The image's entrypoint. With no arguments, or only flags (--override KEY=VALUE ...), it starts
# the broker on /etc/pykafkad/server.properties (or $PYKAFKAD_CONFIG) with the KAFKA_* variables of
# the environment, and prints the effective config first; with a command (pykafkad topic ..., sh),
# it runs that instead.
set -e
case "${1:-}" in
    ""|-*)
        # Advertise the container's host name unless told otherwise: what other containers on the
        # same network reach. A client on the host needs KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://localhost:9092.
        if [ -z "${KAFKA_ADVERTISED_LISTENERS:-}" ] && [ -z "${KAFKA_LISTENERS:-}" ]; then
            KAFKA_ADVERTISED_LISTENERS="PLAINTEXT://${HOSTNAME:-$(hostname)}:9092"
            export KAFKA_ADVERTISED_LISTENERS
        fi
        exec pykafkad serve "${PYKAFKAD_CONFIG:-/etc/pykafkad/server.properties}" --from-env --print-config "$@"
        ;;
    *)
        exec "$@"
        ;;
esac
