#!/bin/sh
# Forms the example's Redis Cluster from the six pods of StatefulSet samlgate-redis: three
# primaries sharing the 16384 hash slots and a replica of each (run by the Job
# samlgate-redis-cluster-create). Safe to run again: a cluster that is already formed is left alone.
set -eu

REDISCLI_AUTH=$(cat /etc/redis/admin/password)
export REDISCLI_AUTH # redis-cli's password, out of the command line and the pod's environment
cli() { redis-cli --tls --cacert /etc/redis/tls/ca.crt --user admin --no-auth-warning "$@"; }
first=samlgate-redis-0.samlgate-redis
nodes="$first samlgate-redis-1.samlgate-redis samlgate-redis-2.samlgate-redis samlgate-redis-3.samlgate-redis samlgate-redis-4.samlgate-redis samlgate-redis-5.samlgate-redis"

# cluster_state and cluster_known_nodes as the first node reports them.
cluster_field() { cli -h "$first" -p 6379 CLUSTER INFO | tr -d '\r' | sed -n "s/^$1://p"; }

for node in $nodes; do
    waited=0
    until [ "$(cli -h "$node" -p 6379 PING 2>/dev/null)" = PONG ]; do
        if [ "$waited" -ge 300 ]; then
            echo "cluster-create: $node does not answer" >&2
            exit 1
        fi
        sleep 5
        waited=$((waited + 5))
    done
done

if [ "$(cluster_field cluster_state)" = ok ]; then
    echo "cluster-create: the cluster is formed (cluster_state:ok); nothing to do"
    exit 0
fi
if [ "$(cluster_field cluster_known_nodes)" != 1 ]; then
    # Formed before (or being formed) but not serving every slot now: a node down or a failover
    # under way, which the cluster repairs by itself; creating it again would fail anyway.
    echo "cluster-create: the cluster exists but is not ok yet; see redis-cli --cluster check $first:6379" >&2
    exit 1
fi

# CLUSTER MEET takes IP addresses only: resolve the pods' names. Afterwards the nodes announce
# their names (cluster-announce-hostname), and that is what clients see.
addresses=""
for node in $nodes; do
    address=$(getent hosts "$node" | awk '{ print $1; exit }')
    if [ -z "$address" ]; then
        echo "cluster-create: cannot resolve $node" >&2
        exit 1
    fi
    addresses="$addresses $address:6379"
done
# shellcheck disable=SC2086 # one argument per node
cli --cluster create $addresses --cluster-replicas 1 --cluster-yes
