"""Exchanges through a gateway while its Redis fails over: what the clients saw.

Sends each pre-minted response (one per line of --responses) once, from --clients threads, for
--seconds; at --fault-at seconds runs --fault (a shell command: kill a primary). Then sends every
response that was accepted (204) once more: each must be refused as a replay (400). Prints one
line of key=value figures:

  exchanges, accepted, unavailable (503), other (any other status or no answer), statuses (each
  status and its count; 0: no answer), outage_s (from the fault to the last 503; 0 without any),
  replayed (accepted responses accepted again: records a failover lost), unchecked (accepted
  responses whose second try was answered neither 400 nor 204: the store still unavailable).

Standard library only (the load scripts run it with the system python3).
"""

import argparse
import collections
import http.client
import subprocess
import threading
import time


samples = {}  # a body of each unexpected status under load, for the report
checking = False  # set while accepted responses are sent again (a 400 is then expected)


def post(port, body):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/api/v1/tokens/authn", body, {"Content-Type": "application/x-www-form-urlencoded"})
        response = connection.getresponse()
        body = response.read()
        if response.status not in (204, 503) and not checking:
            samples.setdefault(response.status, body[:300].decode("utf-8", "replace"))
        return response.status
    except OSError:
        return 0
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--responses", required=True)
    parser.add_argument("--mvpd", default="Cablevision")
    parser.add_argument("--seconds", type=float, default=12)
    parser.add_argument("--fault-at", type=float, default=3)
    parser.add_argument("--fault", required=True)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rate", type=float, default=1000, help="exchanges per second, all clients together")
    arguments = parser.parse_args()

    prefix = f"requestor=REF&deviceId=failover-device&mvpd={arguments.mvpd}&deviceType=iOS&SAMLResponse="
    with open(arguments.responses) as file:
        lines = [line.strip() for line in file if line.strip()]
    lock = threading.Lock()
    results = []  # (seconds since start, status, line index)
    next_line = [0]
    started = time.monotonic()
    deadline = started + arguments.seconds

    interval = arguments.clients / arguments.rate

    def client():
        due = time.monotonic()
        while time.monotonic() < deadline:
            due += interval
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            with lock:
                index = next_line[0]
                next_line[0] += 1
            if index >= len(lines):
                return
            status = post(arguments.port, prefix + lines[index])
            with lock:
                results.append((time.monotonic() - started, status, index))

    threads = [threading.Thread(target=client) for _ in range(arguments.clients)]
    for thread in threads:
        thread.start()
    time.sleep(arguments.fault_at)
    fault_time = time.monotonic() - started
    subprocess.run(arguments.fault, shell=True, check=False)
    for thread in threads:
        thread.join()

    accepted = [index for _, status, index in results if status == 204]
    unavailable = [t for t, status, _ in results if status == 503]
    other = sum(1 for _, status, _ in results if status not in (204, 503))
    outage = max(0, max(unavailable) - fault_time) if unavailable else 0
    statuses = collections.Counter(status for _, status, _ in results)
    global checking
    checking = True
    def second_try(index):
        # The store may still be recovering when the load ends: a 503 is tried again, up to 30 s.
        give_up = time.monotonic() + 30
        while True:
            status = post(arguments.port, prefix + lines[index])
            if status != 503 or time.monotonic() > give_up:
                return status
            time.sleep(0.2)

    again = collections.Counter(second_try(index) for index in accepted)
    replayed = again[204]
    for status, body in samples.items():
        print(f"failover_load: a {status} answer: {body}", flush=True)
    if next_line[0] >= len(lines):
        print("failover_load: ran out of responses; mint more", flush=True)
    print(
        f"FAILOVER exchanges={len(results)} accepted={len(accepted)} unavailable={len(unavailable)} other={other} "
        f"outage_s={outage:.2f} replayed={replayed} unchecked={len(accepted) - replayed - again[400]} statuses={','.join(f'{k}:{v}' for k, v in sorted(statuses.items()))}",
        flush=True,
    )


if __name__ == "__main__":
    main()
