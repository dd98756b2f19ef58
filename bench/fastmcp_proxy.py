"""FastMCP's proxy, a peer of Plugboard's gateway in bench/run: the servers of a client-style
JSON config ({"mcpServers": {NAME: {"command", "args"}}}) behind one MCP server on stdio, as
FastMCP's `create_proxy` builds it.

    python fastmcp_proxy.py CONFIG.json
"""

import json
import sys

from fastmcp.server import create_proxy

with open(sys.argv[1], encoding="utf-8") as config:
    create_proxy(json.load(config), name="fastmcp-proxy").run(show_banner=False)
