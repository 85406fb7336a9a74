# Process helpers of the labs' scripts (deploy/ha/lab/lab.sh, deploy/wide-area/lab/lab.sh):
# sourced, never run. A lab runs each process in the background in a session of its own, its
# pid in $RUN/NAME.pid and its output appended to a log; the sourcing script sets RUN, WAIT_S
# (the longest wait_until waits) and LAB_DIR (named when a wait fails).

launch() {  # launch NAME LOG USER COMMAND...: in the background, its pid in $RUN/NAME.pid
    local name=$1 log=$2 user=$3
    shift 3
    if [ -f "$RUN/$name.pid" ] && kill -0 "$(cat "$RUN/$name.pid")" 2>/dev/null; then
        echo "$name: already running"
        return
    fi
    # setsid and setpriv exec what they run: $! is the process itself. Only root can run a
    # process as another user; anyone else runs it as themselves.
    if [ "$(id -u)" = 0 ] && [ "$user" != root ]; then
        setsid setpriv --reuid="$user" --regid="$user" --init-groups -- "$@" </dev/null >>"$log" 2>&1 &
    else
        setsid "$@" </dev/null >>"$log" 2>&1 &
    fi
    echo $! >"$RUN/$name.pid"
    echo "$name: started (pid $!, log $log)"
}

wait_until() {  # wait_until WHAT COMMAND...: until COMMAND succeeds, at most WAIT_S seconds
    local what=$1 deadline=$((SECONDS + WAIT_S))
    shift
    until "$@" >/dev/null 2>&1; do
        if [ $SECONDS -ge $deadline ]; then
            echo "lab: no $what after ${WAIT_S}s; see the logs under $LAB_DIR" >&2
            exit 1
        fi
        # Nothing announces these states (a process listening, a leader elected): ask again.
        sleep 0.5
    done
}

stop_processes() {  # stop_processes NAME...: each in turn, waiting for it to be gone
    local name pid
    for name in "$@"; do
        [ -f "$RUN/$name.pid" ] || continue
        pid=$(cat "$RUN/$name.pid")
        # A controller checkpoints and Patroni stops its PostgreSQL before they exit.
        if kill "$pid" 2>/dev/null; then
            while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
            echo "$name: stopped"
        fi
        rm -f "$RUN/$name.pid"
    done
}
