// A fixture MCP server for Plugboard's bundle tests: JSON-RPC over stdio with no dependencies.
// Its tools come from ../tools.json ({"tools": [names], "fail": bool}); the tool `describe`
// reports what the server was started with (arguments, whether the key is set), never the key.
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");

const spec = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "tools.json"), "utf8"));
if (spec.fail) {
  process.stderr.write("this version is broken on purpose (tools.json says fail)\n");
  process.exit(3);
}
const key = process.env.NOTES_API_KEY || "";
if (!key) {
  process.stderr.write("NOTES_API_KEY is not set\n");
  process.exit(2);
}
const started = {
  args: process.argv.slice(2),
  key_set: key.length > 0,
  key_length: key.length,
  verbose: process.env.NOTES_VERBOSE || "",
  cwd: process.cwd(),
};
const tools = spec.tools.map((name) => ({
  name,
  description: name === "describe" ? JSON.stringify(started) : `The ${name} tool`,
  inputSchema: { type: "object", properties: {} },
}));

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined) return;
  switch (msg.method) {
    case "initialize":
      send({
        jsonrpc: "2.0",
        id: msg.id,
        result: {
          protocolVersion: "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "plugboard-notes", version: spec.version || "0" },
        },
      });
      break;
    case "tools/list":
      send({ jsonrpc: "2.0", id: msg.id, result: { tools } });
      break;
    case "ping":
      send({ jsonrpc: "2.0", id: msg.id, result: {} });
      break;
    default:
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } });
  }
});
