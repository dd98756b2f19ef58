"""A real MCP client (the official Python SDK's stdio client) for Plugboard's tests: it launches
a server command the way another MCP client would, lists its tools and calls one.

Usage: python_client.py TOOL COMMAND [ARG...]

The server gets this script's whole environment (so PLUGBOARD_HOME and the keyring session
reach `plugboard run`). Prints one JSON document on stdout:
{"server": ..., "tools": [names], "call": {"is_error": bool, "text": str}}.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    tool, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool(tool, {})
            text = "".join(
                getattr(part, "text", "") for part in getattr(result, "content", []) or []
            )
            server_info = getattr(init, "server_info", None) or getattr(init, "serverInfo", None)
            print(
                json.dumps(
                    {
                        "server": getattr(server_info, "name", None),
                        "tools": [t.name for t in tools.tools],
                        "call": {
                            "is_error": bool(
                                getattr(result, "is_error", None)
                                or getattr(result, "isError", False)
                            ),
                            "text": text,
                        },
                    }
                )
            )


asyncio.run(main())
