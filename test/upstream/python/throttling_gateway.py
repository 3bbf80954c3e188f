"""A gateway that is not ferry's emulator: Python's http.server answering the sync
endpoint. The first THROTTLED requests get HTTP 503 with `Retry-After` as an HTTP-date
RETRY_AFTER_S seconds ahead; the others are answered as the gateway does (every `status`
lookup: not found; every send: accepted). Prints its port, then one JSON line per request
(arrival time, status answered), for the test to measure the wait.

Usage: python3 throttling_gateway.py THROTTLED RETRY_AFTER_S
"""
import json
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

THROTTLED = int(sys.argv[1])
RETRY_AFTER_S = int(sys.argv[2])
seen = 0
# Requests are served on threads of their own: counting them and writing their lines
# must not interleave (two lines printed at once came out as one).
lock = threading.Lock()


class Gateway(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        global seen
        arrived = time.time()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            seen += 1
            throttled = seen <= THROTTLED
        if throttled:
            status = 503
            answer = b'{"error":"Service Unavailable"}'
            extra = {"Retry-After": formatdate(arrived + RETRY_AFTER_S, usegmt=True)}
        else:
            status = 200
            items = []
            for operation in json.loads(body)["data"]:
                if operation["type"] == "status":
                    items.append({"success": False, "error": "Message not found", "data": {"id": operation["id"]}})
                else:
                    items.append({"success": True, "data": {"id": operation["id"], "msg_id": f"py-{operation['id']}", "parts": 1}})
            answer = json.dumps({"success": True, "data": items}).encode()
            extra = {}
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(answer)
        line = json.dumps({"at": arrived, "status": status, "retry_after": extra.get("Retry-After")})
        with lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
print(server.server_address[1], flush=True)
server.serve_forever()
