#!/bin/bash
# Run the wide-area lab that make-lab.sh made (deploy/wide-area/README.md, "The lab").
#
#   lab.sh approve [DIR]   enroll a lab manager at the three journals, and approve each
#                          configuration and the software with the manager's key
#   lab.sh start [DIR]     central's broker and the floor broker, then central, then the
#                          two properties; returns once each controller answers on its web port
#   lab.sh status [DIR]    each process, and central's `jackpotd report sites`
#   lab.sh stop [DIR]      everything, in the reverse order
#
# DIR is make-lab.sh's (default /var/lib/jackpotd-wide-area-lab). Each process runs in the
# background, its pid in DIR/run/ and its output in DIR/NAME/NAME.log. The lab manager's key is
# DIR/manager.key, under $JACKPOTD_PASSPHRASE (default: the lab's, printed by approve): a lab's,
# never a casino's. JACKPOTD names the jackpotd to run (default: the one on PATH).
set -euo pipefail

DIR=${2:-/var/lib/jackpotd-wide-area-lab}
RUN=$DIR/run
JACKPOTD=${JACKPOTD:-jackpotd}
CONTROLLERS=(central atlantic boardwalk)
WAIT_S=120
export JACKPOTD_PASSPHRASE=${JACKPOTD_PASSPHRASE:-wide-area-lab-4719}
LAB_DIR=$DIR
# shellcheck source=deploy/lib/lab-processes.sh
. "$(cd "$(dirname "$0")" && pwd)/../../lib/lab-processes.sh"

web_port() {  # web_port NAME: the [web] port of NAME's configuration
    python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["web"]["port"])' \
        "$DIR/$1/jackpotd.toml"
}

answers() {  # answers PORT: the controller on PORT serves its page
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
        "http://127.0.0.1:$1/healthz"
}

approve() {
    local name config
    if [ ! -f "$DIR/manager.key" ]; then
        JACKPOTD_NEW_PASSPHRASE=$JACKPOTD_PASSPHRASE \
            "$JACKPOTD" operator key "Lab Manager" --out "$DIR/manager.key" >/dev/null
        echo "made the lab manager's key: $DIR/manager.key (passphrase $JACKPOTD_PASSPHRASE)"
    fi
    for name in "${CONTROLLERS[@]}"; do
        config=$DIR/$name/jackpotd.toml
        if ! "$JACKPOTD" operator list --config "$config" 2>/dev/null | grep -q "Lab Manager"; then
            "$JACKPOTD" operator add "Lab Manager" --role manager \
                --public-key "$DIR/manager.key" --key "$DIR/manager.key" --config "$config"
        fi
        "$JACKPOTD" config approve --config "$config" --key "$DIR/manager.key"
        "$JACKPOTD" manifest approve --config "$config" --key "$DIR/manager.key" \
            --db "$DIR/$name/journal.db"
    done
}

start() {
    local name port
    install -d "$RUN"
    for name in central floor; do
        launch "mosquitto-$name" "$DIR/$name/mosquitto.log" "$(id -un)" \
            mosquitto -c "$DIR/$name/mosquitto.conf"
    done
    for name in "${CONTROLLERS[@]}"; do
        launch "jackpotd-$name" "$DIR/$name/$name.log" "$(id -un)" \
            "$JACKPOTD" run --config "$DIR/$name/jackpotd.toml"
        port=$(web_port "$name")
        wait_until "answer from $name on port $port" answers "$port"
    done
}

status() {
    local name pid
    for name in jackpotd-central jackpotd-atlantic jackpotd-boardwalk \
        mosquitto-central mosquitto-floor; do
        pid=$(cat "$RUN/$name.pid" 2>/dev/null || true)
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            echo "$name: running (pid $pid)"
        else
            echo "$name: stopped"
        fi
    done
    "$JACKPOTD" report sites --config "$DIR/central/jackpotd.toml"
}

stop() {
    stop_processes jackpotd-boardwalk jackpotd-atlantic jackpotd-central \
        mosquitto-floor mosquitto-central
}

case "${1:-}" in
    approve) approve ;;
    start) start ;;
    status) status ;;
    stop) stop ;;
    *) sed -n '3,9p' "$0" >&2 && exit 2 ;;
esac
