"""A fixture MCP server for Plugboard's bundle tests: JSON-RPC over stdio, standard library only.
Its tool `now` reports its zone argument and whether its token is set (never the token)."""
import json
import os
import sys

token = os.environ.get("CLOCK_TOKEN", "")
if not token:
    sys.stderr.write("CLOCK_TOKEN is not set\n")
    sys.exit(2)
started = {"args": sys.argv[1:], "token_set": True, "token_length": len(token)}
tools = [
    {"name": "now", "description": json.dumps(started), "inputSchema": {"type": "object", "properties": {}}},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "plugboard-clock", "version": "0.4.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": tools}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
