#!/usr/bin/python3
"""Azure's Instance Metadata Service (IMDS) for one emulated VM, served inside the VM's network
namespace on 169.254.169.254:80 (an address on the namespace's lo). vm_init.py imports it and
serves it from a thread; run alone (`imds.py <address> <port> <documents.json>`) for a look.

What it honours, from Microsoft's "Azure Instance Metadata Service" page:
- GET only; header `Metadata: true` required and `X-Forwarded-For` refused (HTTP 400);
- `api-version` required and one of the documented versions (HTTP 400 with `newest-versions`),
  except for /metadata/versions; duplicate query parameters refused;
- /metadata/instance, /metadata/instance/compute, /metadata/instance/network and any route
  filter below them (/metadata/instance/compute/vmId, …/network/interface/0); a leaf needs
  `format=text`; an unknown element is HTTP 404;
- JSON with Content-Type application/json; charset=utf-8.
Not emulated: attested data, managed identity, scheduled events, load balancer metadata, rate
limits, and any difference between api-versions (the documents are served as the caller gave them).
The wording of the 400 for a leaf without format=text, of the 404 and of the 405 is ours (the
page names the status codes, not the bodies).
"""

import json
import socketserver
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

VERSIONS = [
    "2025-04-07", "2024-07-17", "2024-03-15", "2023-11-15", "2023-07-01", "2021-12-13", "2021-11-15",
    "2021-11-01", "2021-10-01", "2021-08-01", "2021-05-01", "2021-03-01", "2021-02-01", "2021-01-01",
    "2020-12-01", "2020-10-01", "2020-09-01", "2020-07-15", "2020-06-01", "2019-11-01", "2019-08-15",
    "2019-08-01", "2019-06-04", "2019-06-01", "2019-04-30", "2019-03-11", "2019-02-01", "2018-10-01",
    "2018-04-02", "2018-02-01", "2017-12-01", "2017-10-01", "2017-08-01", "2017-04-02", "2017-03-01",
]

ERR_HEADER = {"error": "Bad request. Required metadata header not specified"}
ERR_VERSION = {
    "error": "Bad request. api-version is invalid or was not specified in the request. For more information refer to aka.ms/azureimds",
    "newest-versions": VERSIONS[:3],
}


def resolve(documents, path, query):
    """(status, content type, body) for one GET, headers already checked. Pure: unit-testable."""
    if path.rstrip("/") == "/metadata/versions":
        return 200, "application/json; charset=utf-8", json.dumps({"apiVersions": sorted(VERSIONS)}, separators=(",", ":"))
    version = query.get("api-version")
    if version not in VERSIONS:
        return 400, "application/json; charset=utf-8", json.dumps(ERR_VERSION, separators=(",", ":"))
    parts = [p for p in path.split("/") if p]
    if parts[:2] != ["metadata", "instance"]:
        return 404, "application/json; charset=utf-8", json.dumps({"error": "Not found"}, separators=(",", ":"))
    node = {"compute": documents.get("compute", {}), "network": documents.get("network", {})}
    for key in parts[2:]:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return 404, "application/json; charset=utf-8", json.dumps({"error": "Not found"}, separators=(",", ":"))
    fmt = query.get("format", "json")
    leaf = not isinstance(node, (dict, list))
    if fmt == "text":
        if leaf:
            text = "" if node is None else (("true" if node else "false") if isinstance(node, bool) else str(node))
        elif isinstance(node, dict):
            text = "\n".join(k + ("/" if isinstance(v, (dict, list)) else "") for k, v in node.items())
        else:
            text = "\n".join(str(i) + ("/" if isinstance(v, (dict, list)) else "") for i, v in enumerate(node))
        return 200, "text/plain; charset=utf-8", text
    if fmt != "json":
        return 400, "application/json; charset=utf-8", json.dumps({"error": "Bad request. Unsupported format " + fmt}, separators=(",", ":"))
    if leaf:
        return 400, "application/json; charset=utf-8", json.dumps({"error": "Bad request. Leaf nodes require format=text"}, separators=(",", ":"))
    return 200, "application/json; charset=utf-8", json.dumps(node, separators=(",", ":"))


def make_server(address, port, documents, log=lambda line: None):
    class Handler(BaseHTTPRequestHandler):
        server_version = "IMDS (latlab emulator)"
        sys_version = ""
        protocol_version = "HTTP/1.1"

        def send(self, status, ctype, body):
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            url = urlsplit(self.path)
            pairs = parse_qsl(url.query, keep_blank_values=True)
            query = dict(pairs)
            if self.headers.get("Metadata", "").strip().lower() != "true":
                return self.send(400, "application/json; charset=utf-8", json.dumps(ERR_HEADER, separators=(",", ":")))
            if self.headers.get("X-Forwarded-For") is not None:
                return self.send(400, "application/json; charset=utf-8", json.dumps({"error": "Bad request. Forwarded requests are not allowed"}, separators=(",", ":")))
            if len(query) != len(pairs):
                return self.send(400, "application/json; charset=utf-8", json.dumps({"error": "Bad request. Duplicate query parameters"}, separators=(",", ":")))
            self.send(*resolve(documents, url.path, query))

        def refuse(self):
            self.send(405, "application/json; charset=utf-8", json.dumps({"error": "Method not allowed"}, separators=(",", ":")))

        do_POST = do_PUT = do_DELETE = do_PATCH = refuse

        def log_message(self, fmt, *args):
            log("%s %s" % (self.address_string(), fmt % args))

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def server_bind(self):
            # HTTPServer.server_bind asks DNS for the address's name (socket.getfqdn): a VM has no
            # resolver for 169.254.169.254, and the lookup would stall the boot for its timeout.
            socketserver.TCPServer.server_bind(self)
            self.server_name, self.server_port = self.server_address[:2]

    return Server((address, port), Handler)


if __name__ == "__main__":
    with open(sys.argv[3]) as f:
        docs = json.load(f)
    make_server(sys.argv[1], int(sys.argv[2]), docs, print).serve_forever()
