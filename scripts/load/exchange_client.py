"""v1 exchanges over TLS, each with a response of its own (make tls-compare's x1-kept and x2-kept):

    python exchange_client.py URL CA RESPONSES FIRST COUNT MVPD PROTOCOL CONCURRENCY

POSTs lines FIRST .. FIRST+COUNT-1 of RESPONSES (cookbook-encoded signed responses, one per
line, each accepted once by a gateway's replay protection) to URL as v1 authn forms, over
PROTOCOL `h1` (CONCURRENCY kept-alive HTTP/1.1 connections) or `h2` (one HTTP/2 connection,
CONCURRENCY streams at once), trusting CA. Prints `requests: N` (answered 2xx) and, on stderr,
every other status with its count; exits 1 when any exchange was not answered 2xx, so a
measurement never counts refusals as exchanges.
"""

import asyncio
import collections
import sys

import httpx


async def main(url, ca, responses, first, count, mvpd, protocol, concurrency):
    with open(responses) as lines:
        bodies = [line.strip() for index, line in enumerate(lines) if first <= index < first + count]
    if len(bodies) < count:
        sys.exit(f"exchange_client: {responses} has {first + len(bodies)} lines, {first + count} needed")
    prefix = f"requestor=REF&deviceId=load-device&mvpd={mvpd}&deviceType=iOS&SAMLResponse="
    headers = {"content-type": "application/x-www-form-urlencoded"}
    statuses = collections.Counter()
    limits = httpx.Limits(max_connections=1 if protocol == "h2" else concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(http1=protocol == "h1", http2=protocol == "h2", verify=ca, limits=limits, timeout=30) as client:
        queue = iter(bodies)

        async def worker():
            for body in queue:
                answer = await client.post(url, content=prefix + body, headers=headers)
                statuses[answer.status_code] += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    answered = sum(n for status, n in statuses.items() if 200 <= status < 300)
    print(f"requests: {answered}")
    others = {status: n for status, n in statuses.items() if not 200 <= status < 300}
    if others:
        print(f"exchange_client: not answered 2xx: {others}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    url, ca, responses, first, count, mvpd, protocol, concurrency = sys.argv[1:9]
    asyncio.run(main(url, ca, responses, int(first), int(count), mvpd, protocol, int(concurrency)))
