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

launch() {  # launch NAME LOG COMMAND...: in the background, its pid in $RUN/NAME.pid
    local name=$1 log=$2
    shift 2
    if [ -f "$RUN/$name.pid" ] && kill -0 "$(cat "$RUN/$name.pid")" 2>/dev/null; then
        echo "$name: already running"
        return
    fi
    setsid "$@" </dev/null >>"$log" 2>&1 &
    echo $! >"$RUN/$name.pid"
    echo "$name: started (pid $!, log $log)"
}

web_port() {  # web_port NAME: the [web] port of NAME's configuration
    python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["web"]["port"])' \
        "$DIR/$1/jackpotd.toml"
}

answers() {  # answers PORT: the controller on PORT serves its page
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
        "http://127.0.0.1:$1/healthz"
}

wait_until() {  # wait_until WHAT COMMAND...: until COMMAND succeeds, at most WAIT_S seconds
    local what=$1 deadline=$((SECONDS + WAIT_S))
    shift
    until "$@" >/dev/null 2>&1; do
        if [ $SECONDS -ge $deadline ]; then
            echo "lab.sh: no $what after ${WAIT_S}s; see the logs under $DIR" >&2
            exit 1
        fi
        # A process tells nobody when it listens: ask again shortly.
        sleep 0.5
    done
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
        launch "mosquitto-$name" "$DIR/$name/mosquitto.log" \
            mosquitto -c "$DIR/$name/mosquitto.conf"
    done
    for name in "${CONTROLLERS[@]}"; do
        launch "jackpotd-$name" "$DIR/$name/$name.log" \
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
    local name pid
    for name in jackpotd-boardwalk jackpotd-atlantic jackpotd-central \
        mosquitto-floor mosquitto-central; do
        [ -f "$RUN/$name.pid" ] || continue
        pid=$(cat "$RUN/$name.pid")
        # A controller checkpoints before it exits: wait for each process to be gone.
        if kill "$pid" 2>/dev/null; then
            while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
            echo "$name: stopped"
        fi
        rm -f "$RUN/$name.pid"
    done
}

case "${1:-}" in
    approve) approve ;;
    start) start ;;
    status) status ;;
    stop) stop ;;
    *) sed -n '3,9p' "$0" >&2 && exit 2 ;;
esac
