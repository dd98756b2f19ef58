"""A small MCP server on the official Python SDK's 1.x line (legacy era: `initialize` only),
for Plugboard's era tests.

Usage: python_server_v1.py stdio | streamable-http PORT
"""

import sys

from mcp.server.fastmcp import FastMCP

mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
port = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
server = FastMCP("python-sdk-v1-peer", host="127.0.0.1", port=port)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Return the text in upper case."""
    return text.upper()


@server.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review this code:\n{code}"


if __name__ == "__main__":
    server.run("stdio" if mode == "stdio" else mode)
