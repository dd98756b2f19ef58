// The world the app's end-to-end test runs in: a temporary PLUGBOARD_HOME with a config, a test
// catalog whose entries run our fixture MCP server, other apps' files in a temporary user home,
// an OAuth server and an MCP Registry on loopback, and MCPB bundles published over HTTPS.
// `setupWorld()` builds it (the bindings exported with `let` are set then), `teardownWorld()`
// takes it down. Also the helpers the steps use to look at it: the config, the keyring, cards.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { SHOTS, root, s } from "./harness.mjs";

export const FIXTURE = join(root, "target/debug/mcp-fixture");
export const OAUTH_SERVER = join(root, "target/debug/oauth-server");
export const CLI = join(root, "target/debug/plugboard");
export const REGISTRY_FIXTURE = join(root, "target/debug/registry-fixture");
export const TOKEN = "e2e-Token-7f3c91-value";
export const WRONG = "wrong-Token-000000";
export const BEARER = "bearer-Secret-e2e-5521";
// A name no other process has, to find the silent server's process (and check it is gone).
export const SILENT = `silent-e2e-${process.pid}`;
// Cursor already has a GitHub server with a plaintext token (what Import is for).
export const CURSOR_TOKEN = "ghp_e2eCursorPlaintext0123456789abcdef";
export const TMDB_TOKEN = "tmdb-e2e-Secret-8c41a7d2";
export const BUNDLE_KEY = "notes-e2e-Key-41b7c9";
const PACKER = join(root, "tests/bundles/node_modules/.bin/mcpb");
export const NOTES = "io.github.plugboard-e2e/notes";
// …and a server whose command does not exist, for the doctor.
export const GHOST_COMMAND = `pb-e2e-no-such-command-${process.pid}`;

/** The binaries the world needs (besides the app and tauri-driver). */
export const BINARIES = [["fixture", FIXTURE], ["OAuth fixture", OAUTH_SERVER], ["CLI", CLI], ["registry fixture", REGISTRY_FIXTURE]];

export let work;
export let home;
export let catalogDir;
// The user's home as the app sees it: other MCP apps' files live here, never the real ones.
export let userHome;
export let cursorFile;
export let claudeFile;
export let configFile;
export let oauthPort;
export let registryUrl;
export let trust;
export let notesV1;
export let notesV2;
let oauthServer = null;
let registryServer = null;
let bundleHost = null;
let bundleBase = "";
const bundleFiles = {};

export const config = () => (existsSync(configFile) ? readFileSync(configFile, "utf8") : "");

/** The port a fixture prints as `PORT=<n>` once it listens. */
function portOf(child, what) {
  return new Promise((res, rej) => {
    let buf = "";
    child.stdout.on("data", (d) => {
      buf += d;
      const m = buf.match(/PORT=(\d+)/);
      if (m) res(Number(m[1]));
    });
    child.on("exit", () => rej(new Error(`the ${what} exited`)));
    setTimeout(() => rej(new Error(`the ${what} did not start`)), 20000);
  });
}

// MCPB bundles packed by the official packer from the Node fixture bundle server.
function packNotes(version, tools) {
  const src = join(work, `notes-src-${version}`);
  spawnSync("cp", ["-r", join(root, "tests/bundles/node-server"), src]);
  const manifest = JSON.parse(readFileSync(join(src, "manifest.json"), "utf8"));
  manifest.version = version;
  writeFileSync(join(src, "manifest.json"), JSON.stringify(manifest));
  writeFileSync(join(src, "tools.json"), JSON.stringify({ version, tools }));
  const file = join(work, `notes-${version}.mcpb`);
  const r = spawnSync(PACKER, ["pack", src, file], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`mcpb pack: ${r.stdout}${r.stderr}`);
  return { file, sha: createHash("sha256").update(readFileSync(file)).digest("hex") };
}

/** Build the world. */
export async function setupWorld() {
  work = mkdtempSync(join(tmpdir(), "plugboard-e2e-"));
  home = join(work, "home");
  catalogDir = join(work, "catalog");
  userHome = join(work, "user");
  mkdirSync(home);
  mkdirSync(catalogDir);
  mkdirSync(join(userHome, ".cursor"), { recursive: true });
  mkdirSync(join(userHome, ".config"), { recursive: true });
  cursorFile = join(userHome, ".cursor", "mcp.json");
  writeFileSync(
    cursorFile,
    JSON.stringify({
      mcpServers: {
        // A server that works where Cursor runs it (the import tests it before the rewrite).
        "cursor-gh": { command: FIXTURE, args: ["--name", "cursor-gh-e2e"], env: { GITHUB_TOKEN: CURSOR_TOKEN } },
      },
    }),
  );
  claudeFile = join(userHome, ".config", "Claude", "claude_desktop_config.json");
  mkdirSync(SHOTS, { recursive: true });
  writeFileSync(
    join(catalogDir, "e2e-fixture.json"),
    JSON.stringify({
      id: "e2e-fixture",
      name: "Fixture Server",
      description: "Plugboard's own test server. It accepts only the right token and proves it with a read-only credential check.",
      docs_url: "https://example.com/fixture",
      categories: ["developer-tools"],
      keywords: ["fixture", "test"],
      popularity: 1000,
      options: [
        {
          id: "local",
          label: "Local process",
          transport: {
            type: "stdio",
            command: FIXTURE,
            args: ["--name", "fixture", "--expect-env", `TOKEN=${TOKEN}`],
            env_fields: [
              {
                key: "TOKEN",
                label: "Access token",
                kind: "password",
                required: true,
                placeholder: "e2e-…",
                help: "Any token works for the connection; only the right one passes the [credential check](https://example.com/fixture#token).",
              },
            ],
          },
          auth: { type: "none" },
          probe: { tool: "check_credentials", arguments: {} },
        },
      ],
    }),
  );

  writeFileSync(
    join(catalogDir, "e2e-silent.json"),
    JSON.stringify({
      id: "e2e-silent",
      name: "Silent Server",
      description: "A fixture that reads requests and never answers, to test cancelling.",
      docs_url: "https://example.com/silent",
      categories: ["developer-tools"],
      keywords: ["fixture"],
      popularity: 999,
      options: [
        {
          id: "local",
          label: "Local process",
          transport: { type: "stdio", command: FIXTURE, args: ["--name", SILENT, "--misbehave", "never-answer"] },
          auth: { type: "none" },
        },
      ],
    }),
  );

  configFile = join(home, "mcp_config.json");

  // A real authorization server + protected MCP endpoint on loopback, and a server in the config
  // that signs in to it with OAuth (dynamic registration).
  oauthServer = spawn(OAUTH_SERVER, [], { stdio: ["pipe", "pipe", "ignore"] });
  oauthPort = await portOf(oauthServer, "OAuth fixture");
  // The MCP Registry the app reads: the real snapshot (1,108 servers) through the registry API.
  registryServer = spawn(REGISTRY_FIXTURE, [], { stdio: ["pipe", "pipe", "ignore"] });
  registryUrl = `http://127.0.0.1:${await portOf(registryServer, "registry fixture")}`;

  // A loopback HTTPS server that publishes the bundles for the registry (its test CA added to
  // the trust the app is started with).
  const certs = join(work, "certs");
  mkdirSync(certs);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  for (const args of [
    ["req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Plugboard e2e CA"],
    ["req", ...ec, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1"],
  ]) spawnSync("openssl", args, { cwd: certs });
  writeFileSync(join(certs, "ext"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
  spawnSync("openssl", ["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.pem", "-days", "2", "-extfile", "ext"], { cwd: certs });
  const systemTrust = process.env.SSL_CERT_FILE && existsSync(process.env.SSL_CERT_FILE) ? process.env.SSL_CERT_FILE : "/etc/ssl/certs/ca-certificates.crt";
  trust = join(certs, "trust.pem");
  writeFileSync(trust, `${existsSync(systemTrust) ? readFileSync(systemTrust, "utf8") : ""}\n${readFileSync(join(certs, "ca.pem"), "utf8")}`);
  bundleHost = createHttpsServer({ key: readFileSync(join(certs, "leaf.key")), cert: readFileSync(join(certs, "leaf.pem")) }, (req, res) => {
    const file = bundleFiles[req.url];
    if (!file) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/octet-stream" }).end(readFileSync(file));
  });
  await new Promise((r) => bundleHost.listen(0, "127.0.0.1", r));
  bundleBase = `https://127.0.0.1:${bundleHost.address().port}`;
  notesV1 = packNotes("1.0.0", ["describe", "read_note"]);
  notesV2 = packNotes("1.1.0", ["describe", "read_note", "write_note"]);
  writeFileSync(
    configFile,
    JSON.stringify({
      version: 1,
      servers: {
        "oauth-demo": { type: "shttp", url: `http://127.0.0.1:${oauthPort}/mcp`, auth: { type: "oauth2" } },
        ghost: { type: "stdio", command: GHOST_COMMAND },
      },
    }),
  );
}

/** The environment tauri-driver starts the app with (over this process's). */
export function appEnv() {
  return {
    PLUGBOARD_HOME: home,
    PLUGBOARD_CATALOG_DIR: catalogDir,
    PLUGBOARD_REGISTRY_URL: registryUrl,
    // BROWSER=true: xdg-open "opens" sign-in pages into nothing; the test follows them itself.
    BROWSER: "true",
    HOME: userHome,
    XDG_CONFIG_HOME: join(userHome, ".config"),
    // The `plugboard` CLI that launchers written into other apps name.
    PATH: `${dirname(CLI)}:${process.env.PATH}`,
    // The machine's trust plus the bundle host's test CA.
    SSL_CERT_FILE: trust,
  };
}

/** Stop the fixture servers and remove the temporary directories. */
export function teardownWorld() {
  if (oauthServer) {
    oauthServer.stdin.end();
    oauthServer.kill("SIGTERM");
  }
  if (registryServer) {
    registryServer.stdin.end();
    registryServer.kill("SIGTERM");
  }
  bundleHost?.close();
  if (work) rmSync(work, { recursive: true, force: true });
}

/** Run the CLI without blocking this process (which serves the bundles); its exit status and output. */
export function runCli(args, { env, input = "" }) {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** Publish `bundle` as `version` of the registry fixture's notes server. */
export async function publishNotes(version, bundle) {
  bundleFiles[`/notes-${version}.mcpb`] = bundle.file;
  const row = { server: { name: NOTES, version, description: "Notes, as an MCPB bundle", packages: [
    { registryType: "mcpb", identifier: `${bundleBase}/notes-${version}.mcpb`, fileSha256: bundle.sha, transport: { type: "stdio" } },
  ] } };
  const r = await fetch(`${registryUrl}/fixture/rows`, { method: "POST", body: JSON.stringify([row]), headers: { "content-type": "application/json" } });
  if (!r.ok) throw new Error(`publishing ${version}: ${r.status}`);
}

export const card = (name) => `[data-testid="server-card"][data-name="${name}"]`;
export async function healthOf(name) {
  return (await (await s.find(card(name))).find('[data-testid="health"]')).attr("data-state");
}
export function keyring() {
  const r = spawnSync("secret-tool", ["search", "--all", "service", "plugboard"], { encoding: "utf8" });
  return r.status === 0 || r.status === 1 ? `${r.stdout}${r.stderr}` : null;
}
