import { describe, expect, it } from "vitest";
import { clientStatus, exportMessage } from "./clients";
import type { ClientView, ExportResult } from "./ipc";

const client: ClientView = {
  id: "cursor",
  label: "Cursor",
  path: "/h/.cursor/mcp.json",
  exists: true,
  servers: ["a"],
  other_entries: 2,
  drifted: false,
  drift: [],
  error: null,
};

describe("use in other apps", () => {
  it("describes a client", () => {
    expect(clientStatus(client)).toBe("1 Plugboard server, 2 other entries");
    expect(clientStatus({ ...client, servers: [], other_entries: 0 })).toBe("no Plugboard servers");
    expect(clientStatus({ ...client, exists: false })).toMatch(/Not set up/);
    expect(clientStatus({ ...client, error: "bad JSON" })).toBe("Cannot read its file: bad JSON");
  });

  it("says what an export did", () => {
    const r: ExportResult = {
      client: "cursor",
      label: "Cursor",
      path: "/h/.cursor/mcp.json",
      backup: "/h/.cursor/mcp.json.bak",
      changed_file: true,
      changes: [
        { entry: "a", server: "a", action: "add", detail: null },
        { entry: "b", server: "b", action: "unchanged", detail: null },
        { entry: "c", server: "c", action: "conflict", detail: null },
      ],
      disabled: [],
    };
    expect(exportMessage(r)).toBe("Updated Cursor: 1 written, 1 left alone (not written by Plugboard). Backup: /h/.cursor/mcp.json.bak");
    expect(exportMessage({ ...r, changed_file: false })).toBe("Cursor already has your enabled servers.");
  });
});
