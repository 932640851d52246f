# Sourced by the load scripts (load, load-compare, load-mallocs, load-scale, load-replay-store,
# soak, faults, cluster-check, redis-failover, alerts-check, stream-check): the small helpers they share.

# A loopback port nobody listens on, below the kernel's ephemeral range (a server restarted on
# its port then cannot find it taken by some client's outgoing connection), and none this script
# was given before (ports given are kept per script: its shell's PID, the same inside $(...)).
free_port() {
    python3 - "${TMPDIR:-/tmp}/samlgate-free-ports.$$" <<'PY'
import os, random, socket, sys
path = sys.argv[1]
given = set(open(path).read().split()) if os.path.exists(path) else set()
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    low = 32768
low = max(low, 12000)
while True:
    port = random.randrange(10000, low)
    if str(port) in given:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    break
with open(path, "a") as f:
    f.write(f"{port}\n")
print(port)
PY
}

# Whether URL answers 2xx (for await_or_fail: `await_or_fail WHAT 100 ready URL/readyz`).
ready() { curl -fsS -o /dev/null "$1" 2>/dev/null; }

# Runs COMMAND until it succeeds, at most TRIES times 0.1 s apart; otherwise says WHAT did not
# happen and exits 1 (a wait that runs out must fail the script, not let it go on):
# await_or_fail WHAT TRIES COMMAND...
await_or_fail() {
    local what=$1 tries=$2
    shift 2
    for _ in $(seq 1 "$tries"); do
        "$@" && return 0
        sleep 0.1
    done
    echo "$what: timed out after $((tries / 10)) s" >&2
    exit 1
}

# Until the server answers HTTP at all (any status): wait_for URL [curl options, e.g. --http2-prior-knowledge].
wait_for() {
    local url=$1
    shift
    for _ in $(seq 1 100); do
        [ "$(curl -sS "$@" -o /dev/null -w '%{http_code}' "$url" 2>/dev/null)" != "000" ] && return 0
        sleep 0.1
    done
    echo "not answering: $url" >&2
    return 1
}

# Exits with a pointer to the make target that installs it when a tool (a command, or an
# executable's path) is missing: require_tools SCRIPT-NAME HINT TOOL...
require_tools() {
    local script=$1 hint=$2 tool
    shift 2
    for tool in "$@"; do
        command -v "$tool" >/dev/null || [ -x "$tool" ] || { echo "$script: $tool is missing ($hint)" >&2; exit 1; }
    done
}

# start_redis DIR PORT [FLAG...]: a redis-server on loopback PORT keeping its files in DIR (made),
# nothing saved, until it answers PING; its pid in REDIS_PID (for the caller's cleanup).
start_redis() {
    local dir=$1 port=$2
    shift 2
    mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$(cd "$dir" && pwd)" --loglevel warning "$@" \
        >/dev/null 2>&1 &
    REDIS_PID=$!
    for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
    echo "redis-server on port $port did not start" >&2
    kill -KILL "$REDIS_PID" 2>/dev/null || true
    exit 1
}

# CPU ticks (user + system) of processes and their threads.
ticks_of() { local total=0 pid; for pid in "$@"; do total=$(( total + $(awk '{print $14 + $15}' "/proc/$pid/stat") )); done; echo "$total"; }
HZ=$(getconf CLK_TCK)

# The path of a server installed for the load scripts (nginx, haproxy, caddy), also when its
# directory (/usr/sbin) is not on PATH; nothing when it is not installed.
load_tool() { command -v "$1" 2>/dev/null || { [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; } || true; }

# wrk, and with the argument `nginx` nginx too (then NGINX is its path), or a pointer to make deps-load.
require_load_tools() {
    command -v wrk >/dev/null || { echo "wrk is not installed (make deps-load installs it)" >&2; exit 1; }
    [ "${1:-}" = nginx ] || return 0
    NGINX=$(load_tool nginx)
    [ -n "$NGINX" ] || { echo "nginx is not installed (make deps-load installs it)" >&2; exit 1; }
}

# The path of an optional peer of make load-compare (haproxy, caddy), or nothing and one line to
# stderr when it is not installed: its rows are left out, the run goes on.
optional_load_tool() {
    local path
    path=$(load_tool "$1")
    [ -n "$path" ] || echo "$1 is not installed: its rows are left out (make deps-load installs it)" >&2
    echo "$path"
}

# An empty directory (made afresh), printed as an absolute path: nginx's prefix.
fresh_dir() { rm -rf "$1" && mkdir -p "$1" && (cd "$1" && pwd); }

# The throttle flags for `BINARY serve` in a load run: every request comes from one loopback
# client, which the default throttle-exchanges (1/10: one exchange a second per client) would
# refuse nearly always. A bucket this large keeps the throttle enabled, so its cost per request is
# in the figures, but never refuses. Prints nothing for a build that predates the setting (an
# older binary run for comparison), which has no throttle to pay for.
throttle_args() {
    case "$("$1" serve --help 2>/dev/null || true)" in
        *--throttle-exchanges*) echo "--throttle-exchanges 1000000/1000000" ;;
    esac
}
