// A real MCP client for Plugboard's tests: the official TypeScript SDK's Client over its stdio
// transport (what Claude Desktop, VS Code and Cursor build on). It launches a server command the
// way such a client does, declares elicitation, lists the tools and makes the calls it is given.
//
// Usage: node ts_client.mjs PLAN COMMAND [ARG...]
//        node ts_client.mjs PLAN --url URL   (the SDK's streamable HTTP transport, sending the
//                                            headers of the JSON object in MCP_CLIENT_HEADERS)
//   PLAN: JSON {"calls": [{"name": ..., "arguments": {...}}], "elicitation": "accept" | "decline",
//               "roots": [{"uri", "name"}] (declared and given when asked; none declared without),
//               "sampling": TEXT (sampling declared; every request answered with TEXT by "ts-test-model"),
//               "linger_ms": N (how long to wait after the calls, for what comes after them)}
// A launched server gets this process's whole environment. Prints one JSON document on stdout:
// {"server": name, "tools": [names], "calls": [{"is_error": bool, "text": str}], "asked": [messages],
//  "logs": [{"level", "logger", "data"}] (the log messages it was sent),
//  "sampled": [the text of each sampling request's first message]}.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [plan, command, ...args] = process.argv.slice(2);
const { calls = [], elicitation = "decline", roots, sampling, linger_ms = 0 } = JSON.parse(plan);

const capabilities = { elicitation: {} };
if (roots) capabilities.roots = { listChanged: true };
if (sampling) capabilities.sampling = {};
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" }, { capabilities });
if (roots) {
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }));
}
const sampled = [];
if (sampling) {
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    sampled.push(request.params.messages[0]?.content?.text ?? "");
    return {
      role: "assistant",
      content: { type: "text", text: sampling },
      model: "ts-test-model",
      stopReason: "endTurn",
    };
  });
}
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
  const { level, logger, data } = notification.params;
  logs.push({ level, logger, data });
});
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params.message);
  return elicitation === "accept" ? { action: "accept", content: {} } : { action: "decline" };
});

const transport =
  command === "--url"
    ? new StreamableHTTPClientTransport(new URL(args[0]), {
        requestInit: { headers: JSON.parse(process.env.MCP_CLIENT_HEADERS ?? "{}") },
      })
    : new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
await client.connect(transport);
const tools = await client.listTools();
const results = [];
for (const call of calls) {
  const result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
  results.push({
    is_error: Boolean(result.isError),
    text: (result.content ?? []).map((part) => part.text ?? "").join(""),
  });
}
await new Promise((resolve) => setTimeout(resolve, linger_ms));
console.log(
  JSON.stringify({
    server: client.getServerVersion()?.name ?? null,
    tools: tools.tools.map((t) => t.name),
    calls: results,
    asked,
    logs,
    sampled,
  }),
);
await client.close();
