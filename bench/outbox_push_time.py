#!/usr/bin/env python3
"""Times one push of bench/outbox-push.sh: creates endpoint NAME on the server (PUT
/v1/endpoints/NAME, `after` "0", every type) pointing at the receiver, then waits until the
receiver has N distinct events and the endpoint has nothing pending or sending. Prints
`seconds=S` from just before the PUT. Polls from this one process (the receiver every 20 ms,
then the endpoint), so the waiting costs next to nothing next to the work it times.

Usage: outbox_push_time.py SERVE_PORT RECEIVER_PORT NAME N SECRET [TIMEOUT_SECONDS]
"""
import json
import os
import sys
import time
import urllib.request


# bench/lib.sh's serve_start makes the server's one token and exports it.
AUTH = {"Authorization": "Bearer " + os.environ["ONCEORDER_TOKEN"]} if "ONCEORDER_TOKEN" in os.environ else {}


def get(url):
    with urllib.request.urlopen(urllib.request.Request(url, headers=AUTH), timeout=10) as r:
        return r.read().decode()


def main():
    serve, rcv, name, n, secret = sys.argv[1:6]
    n = int(n)
    timeout = float(sys.argv[6]) if len(sys.argv) > 6 else 600
    body = json.dumps({"url": f"http://127.0.0.1:{rcv}/hook", "secret": secret, "after": "0"})
    req = urllib.request.Request(f"http://127.0.0.1:{serve}/v1/endpoints/{name}", data=body.encode(),
                                 method="PUT", headers={"Content-Type": "application/json", **AUTH})
    t0 = time.monotonic()
    with urllib.request.urlopen(req, timeout=10) as r:
        if r.status not in (200, 201):
            sys.exit(f"PUT endpoint: HTTP {r.status}")
    unique = 0
    while unique < n:
        if time.monotonic() - t0 > timeout:
            sys.exit(f"timed out: the receiver has {unique} of {n}")
        time.sleep(0.02)
        stats = dict(l.split() for l in get(f"http://127.0.0.1:{rcv}/stats").splitlines())
        unique = int(stats["unique"])
    while True:
        d = json.loads(get(f"http://127.0.0.1:{serve}/v1/endpoints/{name}"))["deliveries"]
        if d["pending"] + d["sending"] == 0:
            break
        if time.monotonic() - t0 > timeout:
            sys.exit(f"timed out: {d}")
        time.sleep(0.02)
    print(f"seconds={time.monotonic() - t0:.3f}")


if __name__ == "__main__":
    main()
