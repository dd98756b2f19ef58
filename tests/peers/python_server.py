"""A small MCP server built on the official Python SDK, for Plugboard's interoperability tests.

Usage: python_server.py stdio | streamable-http PORT | sse PORT
"""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("python-sdk-peer")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Return the text in upper case."""
    return text.upper()


@server.resource("peer://about")
def about() -> str:
    """What this server is."""
    return "A Python SDK server used by Plugboard's tests."


@server.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review this code:\n{code}"


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run()
    else:
        server.run(mode, host="127.0.0.1", port=int(sys.argv[2]))
