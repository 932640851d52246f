#!/bin/sh
# Starts a data node of the Sentinel example (StatefulSet samlgate-redis, POD_NAME from the pod).
# Which node is the primary is the Sentinels' to say: a node that restarts after a failover comes
# back as a replica of the promoted one, not as the primary its pod number made it at first boot.
set -eu
umask 077 # the copied configuration holds the passwords

me="$POD_NAME.samlgate-redis" # the name this node announces, and its certificate carries
sentinels="samlgate-sentinel-0.samlgate-sentinel samlgate-sentinel-1.samlgate-sentinel samlgate-sentinel-2.samlgate-sentinel"

# A host name or address and nothing else: what a Sentinel answers goes into a configuration line.
valid_name() {
    case "$1" in
    "" | *[!A-Za-z0-9.:-]*) return 1 ;;
    esac
}

# The primary's name as the first Sentinel that answers gives it, or nothing.
ask_sentinels() {
    for sentinel in $sentinels; do
        answer=$(timeout 3 redis-cli -h "$sentinel" -p 26379 --raw SENTINEL get-master-addr-by-name samlgate 2>/dev/null) || continue
        host=$(echo "$answer" | sed -n 1p)
        port=$(echo "$answer" | sed -n 2p)
        if valid_name "$host" && [ "$port" = 6379 ]; then
            echo "$host"
            return
        fi
    done
}

primary=$(ask_sentinels)
if [ -z "$primary" ]; then
    # No Sentinel answers: the first boot (they start after the data nodes), or all of them down.
    primary=samlgate-redis-0.samlgate-redis
elif [ "$primary" = "$me" ] && [ ! -d /data/appendonlydir ]; then
    # The Sentinels still name this node, but its records are gone (a new pod, not a restarted
    # container: the emptyDir is new). Started as the primary, it would be empty and its replicas
    # would copy that. Wait for the Sentinels to promote a replica (this node is down for them
    # after down-after-milliseconds) and replicate from it; after two minutes without one, start
    # as the primary anyway: no replica holds the records then either.
    waited=0
    while [ "$primary" = "$me" ] && [ "$waited" -lt 120 ]; do
        echo "redis-start: the Sentinels name this new, empty node as primary; waiting for a failover" >&2
        sleep 5
        waited=$((waited + 5))
        primary=$(ask_sentinels)
        [ -n "$primary" ] || primary=$me
    done
fi

cp /etc/redis/redis.conf /data/redis.conf
{
    echo "replica-announce-ip $me"
    if [ "$primary" != "$me" ]; then
        echo "replicaof $primary 6379"
    fi
} >>/data/redis.conf
echo "redis-start: $me starts as $([ "$primary" = "$me" ] && echo primary || echo "replica of $primary")" >&2
exec redis-server /data/redis.conf
