"""POSTs one oversized callback body `count` times with Python's http.client, a new connection
each time, and prints what came back as JSON: {"413": 100} or {"413": 67, "BrokenPipeError": 33}.

http.client writes the whole body before it reads any answer, so it sees an answer only when
the server reads (or discards) the body to its end; a server that closes first leaves it a
BrokenPipeError or ConnectionResetError instead.

Usage: python3 post_oversized.py URL COUNT BODY_FILE
"""

import collections
import http.client
import json
import sys
import urllib.parse


def main() -> None:
    url, count, body_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(body_file, "rb") as f:
        body = f.read()
    target = urllib.parse.urlsplit(url)
    path = target.path + (f"?{target.query}" if target.query else "")
    outcomes: collections.Counter[str] = collections.Counter()
    for _ in range(count):
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=20)
        try:
            conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            answer = conn.getresponse()
            answer.read()
            outcomes[str(answer.status)] += 1
        except Exception as error:  # every failure is an outcome to count, not a crash
            outcomes[type(error).__name__] += 1
        finally:
            conn.close()
    print(json.dumps(outcomes))


if __name__ == "__main__":
    main()
