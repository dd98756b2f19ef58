"""A real MCP client of a chosen protocol era (the official Python SDK) for Plugboard's era
tests: it launches a server command the way another MCP client would, lists and calls a tool,
reads the first resource and gets the first prompt, and accepts any elicitation (with
`confirmed: true`), counting them.

Usage: era_client.py MODE TOOL ARGS_JSON COMMAND [ARG...]

MODE is the era the client speaks: `legacy` (the initialize handshake), `auto` (probe with
server/discover, fall back to initialize) or `2026-07-28` (modern, no probe). With the SDK's 1.x
line (which has no modern era) only `legacy` works. Prints one JSON document on stdout:
{"protocol_version", "server", "tools": [names], "call": {"is_error", "text"},
 "resources": [uris], "read": text, "prompts": [names], "prompt": text, "elicited": n}.
The server gets this script's whole environment (PLUGBOARD_HOME reaches `plugboard run`).
"""

import asyncio
import json
import os
import sys

import mcp
from mcp import StdioServerParameters, types

elicited = 0


async def accept(context, params):
    global elicited
    elicited += 1
    return types.ElicitResult(action="accept", content={"confirmed": True})


def text_of(result):
    parts = getattr(result, "content", None) or getattr(result, "contents", None) or []
    return "".join(getattr(part, "text", "") or "" for part in parts)


def prompt_text(result):
    return "".join(
        getattr(m.content, "text", "") or "" for m in getattr(result, "messages", []) or []
    )


async def exercise(session, tool, args, version, server):
    tools = await session.list_tools()
    call = await session.call_tool(tool, args)
    out = {
        "protocol_version": version,
        "server": server,
        "tools": [t.name for t in tools.tools],
        "call": {
            "is_error": bool(getattr(call, "is_error", None) or getattr(call, "isError", False)),
            "text": text_of(call),
        },
    }
    resources = await session.list_resources()
    out["resources"] = [str(r.uri) for r in resources.resources]
    if resources.resources:
        out["read"] = text_of(await session.read_resource(resources.resources[0].uri))
    prompts = await session.list_prompts()
    out["prompts"] = [p.name for p in prompts.prompts]
    if prompts.prompts:
        prompt = prompts.prompts[0]
        arguments = {a.name: "world" for a in (prompt.arguments or [])}
        out["prompt"] = prompt_text(await session.get_prompt(prompt.name, arguments))
    out["elicited"] = elicited
    return out


async def main() -> None:
    mode, tool, args, command, rest = (
        sys.argv[1],
        sys.argv[2],
        json.loads(sys.argv[3]),
        sys.argv[4],
        sys.argv[5:],
    )
    params = StdioServerParameters(command=command, args=rest, env=dict(os.environ))
    if hasattr(mcp, "Client"):
        async with mcp.Client(params, mode=mode, elicitation_callback=accept) as client:
            info = client.server_info
            out = await exercise(
                client, tool, args, client.protocol_version, getattr(info, "name", None)
            )
    else:
        if mode != "legacy":
            raise SystemExit(f"the Python SDK {mcp.__name__} 1.x speaks only the legacy era")
        from mcp.client.stdio import stdio_client

        async with stdio_client(params) as (read, write):
            async with mcp.ClientSession(read, write, elicitation_callback=accept) as session:
                init = await session.initialize()
                out = await exercise(
                    session,
                    tool,
                    args,
                    init.protocolVersion,
                    getattr(init.serverInfo, "name", None),
                )
    print(json.dumps(out))


asyncio.run(main())
