"""A real MCP client (the official Python SDK) for the per-tool control tests: it launches a
server command the way another MCP client would, lists its tools, calls some, and can wait for
the server to say its tool list changed.

Usage: python_tools_client.py PLAN COMMAND [ARG...]

PLAN is JSON: {"calls": [{"tool": NAME, "arguments": {...}}], "ready_file": PATH}. Listings
walk every page. With "ready_file", after listing and calling the client writes that file and
waits (up to 30 s) for notifications/tools/list_changed, then lists again. Prints one JSON document on stdout:
{"tools": [names], "calls": [{"tool", "is_error", "text", "error": {"code", "message"} | null}],
"changed": bool, "tools_after": [names] | null}.
"""

import asyncio
import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


async def all_tools(session):
    """Every page of tools/list."""
    names, cursor = [], None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        names.extend(t.name for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return names


async def session_run(read, write, plan):
    # Replaced once the client is ready: only a change after that counts (server-everything
    # announces one of its own when it starts).
    changed = {"event": anyio.Event()}

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed["event"].set()

    async with ClientSession(read, write, message_handler=on_message) as session:
        await session.initialize()
        tools = await all_tools(session)
        calls = []
        for call in plan.get("calls", []):
            entry = {"tool": call["tool"], "is_error": False, "text": "", "error": None}
            try:
                result = await session.call_tool(call["tool"], call.get("arguments", {}))
                entry["is_error"] = bool(getattr(result, "is_error", False))
                entry["text"] = "".join(
                    getattr(part, "text", "") for part in getattr(result, "content", []) or []
                )
            except MCPError as err:
                entry["error"] = {"code": err.error.code, "message": err.error.message}
            calls.append(entry)
        out = {
            "tools": tools,
            "calls": calls,
            "changed": False,
            "tools_after": None,
        }
        if plan.get("ready_file"):
            changed["event"] = anyio.Event()
            with open(plan["ready_file"], "w") as ready:
                ready.write("ready")
            with anyio.move_on_after(30):
                await changed["event"].wait()
            out["changed"] = changed["event"].is_set()
            out["tools_after"] = await all_tools(session)
        return out


async def main() -> None:
    plan = json.loads(sys.argv[1])
    params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        out = await session_run(read, write, plan)
    print(json.dumps(out))


asyncio.run(main())
