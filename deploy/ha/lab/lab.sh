#!/bin/bash
# The three-node lab on one machine (deploy/ha/README.md, "The lab").
#
#   lab.sh start         etcd, Patroni (PostgreSQL), mosquitto on the three nodes, and HAProxy;
#                        returns once Patroni shows a leader and a synchronous standby
#   lab.sh controllers   jackpotd on the three nodes (after the approvals the README lists)
#   lab.sh status        patronictl list, and HAProxy's view of every door
#   lab.sh stop          everything, in the reverse order
#   lab.sh clean         stop, then remove /var/lib/jackpotd-ha-lab (every node's data)
#
# Each process runs in the background, its pid in /var/lib/jackpotd-ha-lab/run/ and its output
# in the node's folder (nodeN/*.log). Run as root, Patroni runs as the postgres user (initdb
# and PostgreSQL refuse root) and mosquitto as mosquitto; run as another user, the folder must
# be theirs (sudo install -d -o "$USER" /var/lib/jackpotd-ha-lab) and everything runs as them.
# JACKPOTD names the jackpotd to run (default: the one on PATH).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=/var/lib/jackpotd-ha-lab
RUN=$ROOT/run
NODES=(node1 node2 node3)
JACKPOTD=${JACKPOTD:-jackpotd}
WAIT_S=90
LAB_DIR=$ROOT
# shellcheck source=deploy/lib/lab-processes.sh
. "$HERE/../../lib/lab-processes.sh"

own() {  # own USER PATH...: give PATHs to USER when we are root
    local user=$1
    shift
    if [ "$(id -u)" = 0 ]; then chown -R "$user:$user" "$@"; fi
}

healthy() {  # a leader and a synchronous standby, as Patroni shows them
    local members
    members=$(patronictl -c "$ROOT/node1/patroni.yml" list --format json)
    grep -q '"Role": "Leader"' <<<"$members" && grep -q '"Role": "Sync Standby"' <<<"$members"
}

start() {
    install -d "$ROOT" "$RUN"
    install -m 0755 "$HERE/../post-bootstrap.sh" "$ROOT/post-bootstrap.sh"
    cp "$HERE/haproxy.cfg" "$ROOT/haproxy.cfg"
    local server_user=postgres broker_user=mosquitto
    if [ "$(id -u)" != 0 ]; then server_user=$(id -un) broker_user=$(id -un); fi
    for node in "${NODES[@]}"; do
        install -d "$ROOT/$node" "$ROOT/$node/jackpotd" "$ROOT/$node/mosquitto"
        install -d -m 0700 "$ROOT/$node/etcd" "$ROOT/$node/postgres"
        cp "$HERE/$node/"{etcd.yml,patroni.yml,mosquitto.conf,jackpotd.toml} "$ROOT/$node/"
        own "$server_user" "$ROOT/$node/postgres" "$ROOT/$node/patroni.yml"
        own "$broker_user" "$ROOT/$node/mosquitto"
    done
    for node in "${NODES[@]}"; do
        launch "etcd-$node" "$ROOT/$node/etcd.log" "$(id -un)" etcd --config-file "$ROOT/$node/etcd.yml"
    done
    for node in "${NODES[@]}"; do
        launch "patroni-$node" "$ROOT/$node/patroni.log" "$server_user" \
            patroni "$ROOT/$node/patroni.yml"
        launch "mosquitto-$node" "$ROOT/$node/mosquitto.log" "$(id -un)" \
            mosquitto -c "$ROOT/$node/mosquitto.conf"
    done
    launch haproxy "$ROOT/haproxy.log" "$(id -un)" haproxy -db -f "$ROOT/haproxy.cfg"
    wait_until "leader and synchronous standby" healthy
    patronictl -c "$ROOT/node1/patroni.yml" list
}

controllers() {
    for node in "${NODES[@]}"; do
        if [ ! -f "$ROOT/$node/jackpotd/controller.key" ]; then
            "$JACKPOTD" key generate --out "$ROOT/$node/jackpotd/controller.key"
        fi
        launch "jackpotd-$node" "$ROOT/$node/jackpotd.log" "$(id -un)" \
            "$JACKPOTD" run --config "$ROOT/$node/jackpotd.toml"
    done
}

status() {
    patronictl -c "$ROOT/node1/patroni.yml" list
    curl -s "http://127.0.0.1:7000/;csv" | cut -d, -f1,2,18 | grep -v -e FRONTEND -e BACKEND
}

stop() {
    stop_processes jackpotd-node3 jackpotd-node2 jackpotd-node1 haproxy \
        mosquitto-node3 mosquitto-node2 mosquitto-node1 \
        patroni-node3 patroni-node2 patroni-node1 etcd-node3 etcd-node2 etcd-node1
}

case "${1:-}" in
    start) start ;;
    controllers) controllers ;;
    status) status ;;
    stop) stop ;;
    clean) stop && rm -rf "$ROOT" ;;
    *) sed -n '3,9p' "$0" >&2 && exit 2 ;;
esac
