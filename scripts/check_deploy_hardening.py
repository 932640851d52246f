"""The hardening of the shipped deployment files, checked so that removing it fails `make test`.

Usage: check_deploy_hardening.py   (from the repository root; needs PyYAML, in the tools venv)

- deploy/compose.yaml, alone and with each overlay deploy/compose.*.yaml: every service read-only,
  all capabilities dropped, no-new-privileges, ports published on 127.0.0.1 only.
- deploy/samlgate.service: the system-call filter, native architecture only, the cloud metadata
  address denied, the secret configuration as a credential (no EnvironmentFile), no capabilities,
  no new privileges, a read-only system.
- every NetworkPolicy under deploy/kubernetes: both directions restricted, each rule naming its
  peers (by non-empty selectors, no address block) and its ports, DNS only to kube-system's
  kube-dns pods; the gateway's (base/networkpolicy.yaml) also: ingress only from selected
  namespaces, a DNS rule, and some rule in each direction.
- every example Redis's redis.conf (deploy/kubernetes/*/redis.conf): TLS only (replication and
  the cluster bus too, where used), every user (the default one included) with a password and
  limited to listed commands.
- every example Sentinel's sentinel.conf: TLS to the data nodes and among Sentinels (client
  certificates required on its TLS port), the Sentinels' own logins as named users, the default
  user (the gateway's: it asks without a password) limited to asking for the primary, its
  announcements and PING, every other user with a password and limited to listed commands, no
  script reconfiguration.
"""

import glob
import sys

import yaml

problems = []


def need(condition, message):
    if not condition:
        problems.append(message)


def check_compose(path, overlay=None):
    # Each service as the files leave it: an overlay's keys replace the base's (a list an overlay
    # gives is checked as given, stricter than compose's merge of some lists).
    with open(path) as f:
        services = yaml.safe_load(f)["services"]
    if overlay:
        with open(overlay) as f:
            for name, service in (yaml.safe_load(f).get("services") or {}).items():
                services[name] = {**services.get(name, {}), **(service or {})}
        path = f"{path} + {overlay}"
    for name, service in services.items():
        where = f"{path}: service {name}"
        need(service.get("read_only") is True, f"{where}: read_only: true missing")
        need("ALL" in (service.get("cap_drop") or []), f"{where}: cap_drop: [ALL] missing")
        need("no-new-privileges:true" in (service.get("security_opt") or []), f"{where}: security_opt no-new-privileges:true missing")
        for port in service.get("ports") or []:
            need(str(port).startswith("127.0.0.1:"), f"{where}: port {port} is not published on 127.0.0.1 only")


def check_unit(path):
    settings = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", ";", "[")) and "=" in line:
                key, value = line.split("=", 1)
                settings.setdefault(key, []).append(value)
    required = {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "SystemCallFilter": "@system-service",
        "SystemCallArchitectures": "native",
        "CapabilityBoundingSet": "",
    }
    for key, value in required.items():
        need(value in settings.get(key, []), f"{path}: {key}={value} missing")
    denied = " ".join(settings.get("IPAddressDeny", [])).split()
    for address in ["169.254.169.254", "fd00:ec2::254"]:
        need(address in denied, f"{path}: IPAddressDeny does not name {address}")
    need(any(v.startswith("samlgate.yaml:") for v in settings.get("LoadCredential", [])), f"{path}: LoadCredential=samlgate.yaml:… missing")
    need("EnvironmentFile" not in settings, f"{path}: EnvironmentFile= is back (the secret goes in a credential)")


def selects(peer, namespace, labels):
    ns = (peer.get("namespaceSelector") or {}).get("matchLabels") or {}
    pods = (peer.get("podSelector") or {}).get("matchLabels") or {}
    return ns.get("kubernetes.io/metadata.name") == namespace and all(pods.get(k) == v for k, v in labels.items())


def named_peer(peer):
    # A peer is a namespace and/or pod selector with labels: an empty selector admits everything.
    selectors = [peer.get(key) for key in ("namespaceSelector", "podSelector") if key in peer]
    return bool(selectors) and all((selector or {}).get("matchLabels") or (selector or {}).get("matchExpressions") for selector in selectors)


def check_policy_rules(where, spec):
    need(set(spec.get("policyTypes", [])) == {"Ingress", "Egress"}, f"{where}: policyTypes must be Ingress and Egress")
    for direction, peers_key in [("ingress", "from"), ("egress", "to")]:
        for index, rule in enumerate(spec.get(direction) or []):
            peers = rule.get(peers_key) or []
            need(peers, f"{where}: {direction} rule {index} has no '{peers_key}': it admits every peer")
            need(rule.get("ports"), f"{where}: {direction} rule {index} has no ports")
            for peer in peers:
                need("ipBlock" not in peer, f"{where}: {direction} rule {index} names an address block (use selectors)")
                need("ipBlock" in peer or named_peer(peer), f"{where}: {direction} rule {index} has a peer without selector labels: it admits every pod or namespace")
    for rule in dns_rules(spec):
        need(all(selects(p, "kube-system", {"k8s-app": "kube-dns"}) for p in rule.get("to") or []),
             f"{where}: DNS egress goes beyond kube-system's kube-dns pods")


def dns_rules(spec):
    return [r for r in spec.get("egress") or [] if any(p.get("port") == 53 for p in r.get("ports") or [])]


def check_network_policies(root):
    # Every NetworkPolicy of every manifest (kustomization.yaml and samlgate.yaml are not manifests).
    found = 0
    for path in sorted(glob.glob(f"{root}/**/*.yaml", recursive=True)):
        if path.endswith(("/kustomization.yaml", "/samlgate.yaml")):
            continue
        with open(path) as f:
            for document in yaml.safe_load_all(f):
                if (document or {}).get("kind") == "NetworkPolicy":
                    found += 1
                    check_policy_rules(f"{path}: NetworkPolicy {document['metadata']['name']}", document["spec"])
    need(found, f"{root}: no NetworkPolicy found")


def check_gateway_network_policy(path):
    with open(path) as f:
        spec = yaml.safe_load(f)["spec"]
    for direction in ["ingress", "egress"]:
        need(spec.get(direction), f"{path}: no {direction} rules")
    need(dns_rules(spec), f"{path}: no DNS egress rule")
    ingress_peers = [p for r in spec.get("ingress") or [] for p in r.get("from") or []]
    need(len(ingress_peers) >= 2 and all("namespaceSelector" in p for p in ingress_peers),
         f"{path}: ingress must come from the ingress controller's and the scraper's namespaces")


def conf_lines(path):
    with open(path) as f:
        return [line.split() for line in f if line.strip() and not line.lstrip().startswith("#")]


def check_acl_user(path, words, allowed=None):
    # A user line: a password, every command taken away first, then only listed ones given back.
    name = words[1]
    granted = [word for word in words[2:] if word.startswith("+")]
    need("-@all" in words and "+@all" not in words and "allcommands" not in words,
         f"{path}: user {name} must start from -@all and allow listed commands only")
    if allowed is None:
        need("nopass" not in words and any(word.startswith((">", "#")) for word in words),
             f"{path}: user {name} has no password")
    else:
        need(set(granted) <= allowed, f"{path}: user {name} may run more than {sorted(allowed)}")
        need("allchannels" not in words and "&*" not in words, f"{path}: user {name} may use every Pub/Sub channel")


def check_redis_conf(path):
    # Every user line of an example Redis: the default user included, so no user can run all commands.
    lines = conf_lines(path)
    need(["port", "0"] in lines, f"{path}: the plaintext port is not off (port 0)")
    need(any(words[0] == "tls-port" for words in lines), f"{path}: tls-port missing")
    users = [words for words in lines if words[0] == "user"]
    need(any(words[1] == "default" for words in users), f"{path}: the default user is left unrestricted (no 'user default' line)")
    for words in users:
        check_acl_user(path, words)
    # A data node that replicates (or is one of a cluster) copies the records in TLS as well.
    replicates = any(words[0] in ("replicaof", "slaveof", "masterauth", "masteruser") for words in lines)
    clustered = ["cluster-enabled", "yes"] in lines
    if replicates or clustered:
        need(["tls-replication", "yes"] in lines, f"{path}: replication is not in TLS (tls-replication yes)")
    if clustered:
        need(["tls-cluster", "yes"] in lines, f"{path}: the cluster bus is not in TLS (tls-cluster yes)")


# What the gateway (and a start script) asks a Sentinel, without a password: nothing more.
SENTINEL_DEFAULT_COMMANDS = {"+ping", "+subscribe", "+sentinel|get-master-addr-by-name"}


def check_sentinel_conf(path):
    lines = conf_lines(path)
    need(["tls-replication", "yes"] in lines, f"{path}: the Sentinel reaches the data nodes and the other Sentinels without TLS (tls-replication yes)")
    need(any(words[0] == "tls-port" for words in lines), f"{path}: tls-port missing (the other Sentinels connect there)")
    # Optional, not required: the gateway (rediss-sentinel://) has no client certificate; the
    # Sentinels still present theirs, and the default user's commands are held to the few below.
    need(["tls-auth-clients", "no"] not in lines, f"{path}: the TLS port must ask for client certificates (yes or optional)")
    need(["sentinel", "deny-scripts-reconfig", "no"] not in lines, f"{path}: scripts may be reconfigured at run time")
    sentinel_user = [words for words in lines if words[:2] == ["sentinel", "sentinel-user"]]
    need(sentinel_user and sentinel_user[0][2] != "default" and any(words[:2] == ["sentinel", "sentinel-pass"] for words in lines),
         f"{path}: the Sentinels do not log in to each other as a user of their own (sentinel sentinel-user/sentinel-pass)")
    monitored = [words[2] for words in lines if words[:2] == ["sentinel", "monitor"]]
    need(monitored, f"{path}: monitors no primary")
    for master in monitored:
        auth_user = [words for words in lines if words[:3] == ["sentinel", "auth-user", master]]
        need(auth_user and auth_user[0][3] != "default" and any(words[:3] == ["sentinel", "auth-pass", master] for words in lines),
             f"{path}: the Sentinels log in to {master}'s nodes as no user of their own (sentinel auth-user/auth-pass)")
    users = [words for words in lines if words[0] == "user"]
    need(any(words[1] == "default" for words in users), f"{path}: the default user is left unrestricted (no 'user default' line)")
    for words in users:
        check_acl_user(path, words, SENTINEL_DEFAULT_COMMANDS if words[1] == "default" else None)


check_compose("deploy/compose.yaml")
for overlay in sorted(glob.glob("deploy/compose.*.yaml")):
    check_compose("deploy/compose.yaml", overlay)
check_unit("deploy/samlgate.service")
check_network_policies("deploy/kubernetes")
check_gateway_network_policy("deploy/kubernetes/base/networkpolicy.yaml")
redis_confs = sorted(glob.glob("deploy/kubernetes/*/redis.conf"))
need("deploy/kubernetes/example/redis.conf" in redis_confs, "deploy/kubernetes/example/redis.conf missing")
for path in redis_confs:
    check_redis_conf(path)
for path in sorted(glob.glob("deploy/kubernetes/*/sentinel.conf")):
    check_sentinel_conf(path)
for problem in problems:
    print(f"deploy: {problem}", file=sys.stderr)
if problems:
    sys.exit(1)
print("deploy: compose and its overlays, systemd unit, NetworkPolicies and the example Redis and Sentinel configurations keep their hardening")
