"""A real MCP client (the official Python SDK) for the per-tool control tests: it launches a
server command the way another MCP client would, lists its tools, calls some, and can wait for
the server to say its tool list changed.

Usage: python_tools_client.py PLAN COMMAND [ARG...]
       python_tools_client.py PLAN --url URL   (streamable HTTP, "modern" only; the headers of
                                                every request as JSON in MCP_CLIENT_HEADERS)

PLAN is JSON: {"calls": [{"tool": NAME, "arguments": {...}}], "ready_file": PATH, "modern": bool,
"roots": [{"uri", "name"}], "sampling": TEXT}. With "roots" and "sampling" (modern only) the client
declares them and answers the server's requests: its roots, and a completion of model
`py-test-model` whose text is TEXT.
Listings walk every page. With "ready_file", after listing and calling the client writes that
file and waits (up to 30 s) for notifications/tools/list_changed, then lists again. With
"modern", the SDK's high-level client negotiates the era itself (server/discover first, so
2026-07-28 with a server that speaks it) and waits for the change on a subscriptions/listen
stream that asked for toolsListChanged. Prints one JSON document on stdout:
{"version", "tools": [names], "calls": [{"tool", "is_error", "text", "error": {"code", "message"} | null}],
"changed": bool, "tools_after": [names] | null, "sampled": [the text of each sampling request]}.
"""

import asyncio
import json
import os
import sys

import anyio
import httpx2
from mcp import Client, ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged


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


async def all_tools_modern(client):
    """Every page of tools/list, through the high-level client."""
    names, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor)
        names.extend(t.name for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return names


async def make_calls(call_tool, plan):
    calls = []
    for call in plan.get("calls", []):
        entry = {"tool": call["tool"], "is_error": False, "text": "", "error": None}
        try:
            result = await call_tool(call["tool"], call.get("arguments", {}))
            entry["is_error"] = bool(getattr(result, "is_error", False))
            entry["text"] = "".join(
                getattr(part, "text", "") for part in getattr(result, "content", []) or []
            )
        except MCPError as err:
            entry["error"] = {"code": err.error.code, "message": err.error.message}
        calls.append(entry)
    return calls


def say_ready(plan):
    with open(plan["ready_file"], "w") as ready:
        ready.write("ready")


def answering(plan, sampled):
    """The callbacks that give the plan's roots and completions (none when it has none)."""
    callbacks = {}
    if "roots" in plan:

        async def list_roots(context):
            return types.ListRootsResult(roots=[types.Root(**root) for root in plan["roots"]])

        callbacks["list_roots_callback"] = list_roots
    if "sampling" in plan:

        async def sample(context, params):
            sampled.append(
                " ".join(getattr(m.content, "text", "") for m in params.messages)
            )
            return types.CreateMessageResult(
                role="assistant",
                model="py-test-model",
                content=types.TextContent(type="text", text=plan["sampling"]),
            )

        callbacks["sampling_callback"] = sample
    return callbacks


async def modern_run(server, plan):
    sampled = []
    async with Client(server, cache=None, **answering(plan, sampled)) as client:
        out = {
            "version": client.protocol_version,
            "tools": await all_tools_modern(client),
            "calls": await make_calls(client.call_tool, plan),
            "changed": False,
            "tools_after": None,
            "sampled": sampled,
        }
        if plan.get("ready_file"):
            async with client.listen(tools_list_changed=True) as stream:
                say_ready(plan)
                with anyio.move_on_after(30):
                    async for event in stream:
                        if isinstance(event, ToolsListChanged):
                            out["changed"] = True
                            break
            out["tools_after"] = await all_tools_modern(client)
        return out


async def session_run(read, write, plan):
    # Replaced once the client is ready: only a change after that counts (server-everything
    # announces one of its own when it starts).
    changed = {"event": anyio.Event()}

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed["event"].set()

    async with ClientSession(read, write, message_handler=on_message) as session:
        initialized = await session.initialize()
        tools = await all_tools(session)
        out = {
            "version": initialized.protocol_version,
            "tools": tools,
            "calls": await make_calls(session.call_tool, plan),
            "changed": False,
            "tools_after": None,
        }
        if plan.get("ready_file"):
            changed["event"] = anyio.Event()
            say_ready(plan)
            with anyio.move_on_after(30):
                await changed["event"].wait()
            out["changed"] = changed["event"].is_set()
            out["tools_after"] = await all_tools(session)
        return out


async def main() -> None:
    plan = json.loads(sys.argv[1])
    if sys.argv[2] == "--url":
        headers = json.loads(os.environ.get("MCP_CLIENT_HEADERS", "{}"))
        http = httpx2.AsyncClient(headers=headers, timeout=60)
        async with http:
            out = await modern_run(streamable_http_client(sys.argv[3], http_client=http), plan)
        print(json.dumps(out))
        return
    params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:], env=dict(os.environ))
    if plan.get("modern"):
        out = await modern_run(params, plan)
    else:
        async with stdio_client(params) as (read, write):
            out = await session_run(read, write, plan)
    print(json.dumps(out))


asyncio.run(main())
