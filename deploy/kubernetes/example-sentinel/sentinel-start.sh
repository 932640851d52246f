#!/bin/sh
# Starts a Sentinel of the example (StatefulSet samlgate-sentinel, POD_NAME from the pod).
# A Sentinel keeps what it learns (the current primary, the replicas, the other Sentinels, the
# failover epoch) in its configuration file: a restarted container reuses the copy in /data. A new
# pod starts from sentinel.conf, monitoring the primary the other Sentinels name (pod 0 when none
# answers: the first boot), so that it does not first try to fail over a node that is a replica.
set -eu
umask 077 # the copied configuration holds the passwords

me="$POD_NAME.samlgate-sentinel"
conf=/data/sentinel.conf

# A host name or address and nothing else: what a Sentinel answers goes into a configuration line.
valid_name() {
    case "$1" in
    "" | *[!A-Za-z0-9.:-]*) return 1 ;;
    esac
}

if [ ! -f "$conf" ]; then
    primary=samlgate-redis-0.samlgate-redis
    for peer in samlgate-sentinel-0.samlgate-sentinel samlgate-sentinel-1.samlgate-sentinel samlgate-sentinel-2.samlgate-sentinel; do
        [ "$peer" != "$me" ] || continue
        answer=$(timeout 3 redis-cli -h "$peer" -p 26379 --raw SENTINEL get-master-addr-by-name samlgate 2>/dev/null) || continue
        host=$(echo "$answer" | sed -n 1p)
        port=$(echo "$answer" | sed -n 2p)
        if valid_name "$host" && [ "$port" = 6379 ]; then
            primary=$host
            break
        fi
    done
    # With resolve-hostnames, a Sentinel whose primary's name does not resolve yet refuses to
    # start: on first boot, wait for pod 0 of the data nodes to exist.
    waited=0
    until getent hosts "$primary" >/dev/null; do
        if [ "$waited" -ge 120 ]; then
            echo "sentinel-start: $primary does not resolve" >&2
            exit 1
        fi
        sleep 2
        waited=$((waited + 2))
    done
    sed "s/^sentinel monitor samlgate .*/sentinel monitor samlgate $primary 6379 2/" /etc/redis/sentinel.conf >"$conf"
    echo "sentinel announce-ip $me" >>"$conf"
    echo "sentinel-start: $me monitors $primary" >&2
fi
exec redis-server "$conf" --sentinel
