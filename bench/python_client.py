"""The official Python MCP SDK as a client, for bench/run: connect, initialize, list the tools
(all pages), print their names as JSON, close.

Usage: python_client.py stdio CMD [ARG...] | python_client.py http URL
"""

import json
import sys

import anyio
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


async def list_tools(read, write):
    async with ClientSession(read, write) as session:
        await session.initialize()
        names, cursor = [], None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            result = await session.list_tools(params=params)
            names += [tool.name for tool in result.tools]
            cursor = result.next_cursor
            if not cursor:
                return names


async def main(argv):
    if len(argv) >= 2 and argv[0] == "stdio":
        params = StdioServerParameters(command=argv[1], args=argv[2:])
        async with stdio_client(params) as (read, write):
            names = await list_tools(read, write)
    elif len(argv) == 2 and argv[0] == "http":
        async with streamable_http_client(argv[1]) as streams:
            names = await list_tools(streams[0], streams[1])
    else:
        sys.exit(__doc__)
    print(json.dumps(names))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
