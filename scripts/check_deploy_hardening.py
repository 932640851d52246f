"""The hardening of the shipped deployment files, checked so that removing it fails `make test`.

Usage: check_deploy_hardening.py   (from the repository root; needs PyYAML, in the tools venv)

- deploy/compose.yaml: every service read-only, all capabilities dropped, no-new-privileges,
  ports published on 127.0.0.1 only.
- deploy/samlgate.service: the system-call filter, native architecture only, the cloud metadata
  address denied, the secret configuration as a credential (no EnvironmentFile), no capabilities,
  no new privileges, a read-only system.
- deploy/kubernetes/base/networkpolicy.yaml: ingress only from selected peers, egress only to
  selected peers, DNS only to kube-system's kube-dns pods, no open address block.
- deploy/kubernetes/example/redis.conf: TLS only, every user (the default one included) with a
  password and limited to listed commands.
"""

import sys

import yaml

problems = []


def need(condition, message):
    if not condition:
        problems.append(message)


def check_compose(path):
    with open(path) as f:
        compose = yaml.safe_load(f)
    for name, service in compose["services"].items():
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


def check_network_policy(path):
    with open(path) as f:
        policy = yaml.safe_load(f)
    spec = policy["spec"]
    need(set(spec.get("policyTypes", [])) == {"Ingress", "Egress"}, f"{path}: policyTypes must be Ingress and Egress")
    for direction, peers_key in [("ingress", "from"), ("egress", "to")]:
        rules = spec.get(direction) or []
        need(rules, f"{path}: no {direction} rules")
        for index, rule in enumerate(rules):
            peers = rule.get(peers_key) or []
            need(peers, f"{path}: {direction} rule {index} has no '{peers_key}': it admits every peer")
            need(rule.get("ports"), f"{path}: {direction} rule {index} has no ports")
            for peer in peers:
                need("ipBlock" not in peer, f"{path}: {direction} rule {index} names an address block (use selectors)")
    dns = [r for r in spec.get("egress") or [] if any(p.get("port") == 53 for p in r.get("ports") or [])]
    need(dns, f"{path}: no DNS egress rule")
    for rule in dns:
        need(all(selects(p, "kube-system", {"k8s-app": "kube-dns"}) for p in rule.get("to") or []),
             f"{path}: DNS egress goes beyond kube-system's kube-dns pods")
    ingress_peers = [p for r in spec.get("ingress") or [] for p in r.get("from") or []]
    need(len(ingress_peers) >= 2 and all("namespaceSelector" in p for p in ingress_peers),
         f"{path}: ingress must come from the ingress controller's and the scraper's namespaces")


def check_redis_conf(path):
    # Every user line of the example Redis: the default user included, so no user can run all commands.
    with open(path) as f:
        lines = [line.split() for line in f if line.strip() and not line.startswith("#")]
    need(["port", "0"] in lines, f"{path}: the plaintext port is not off (port 0)")
    need(any(words[0] == "tls-port" for words in lines), f"{path}: tls-port missing")
    users = [words for words in lines if words[0] == "user"]
    need(any(words[1] == "default" for words in users), f"{path}: the default user is left unrestricted (no 'user default' line)")
    for words in users:
        need("-@all" in words and "+@all" not in words and "allcommands" not in words and "nopass" not in words,
             f"{path}: user {words[1]} must have a password, start from -@all and allow listed commands only")


check_compose("deploy/compose.yaml")
check_unit("deploy/samlgate.service")
check_network_policy("deploy/kubernetes/base/networkpolicy.yaml")
check_redis_conf("deploy/kubernetes/example/redis.conf")
for problem in problems:
    print(f"deploy: {problem}", file=sys.stderr)
if problems:
    sys.exit(1)
print("deploy: compose, systemd unit, NetworkPolicy and example Redis keep their hardening")
