import { describe, expect, it } from "vitest";
import { initialChoice } from "./exportChoice";

const servers = [
  { name: "ok", health: "verified", target: "npx -y ok" },
  { name: "plain", health: "working", target: "https://plain.example/mcp" },
  { name: "broken", health: "failed", target: "uvx broken" },
  { name: "new", health: "unchecked", target: "node new.js" },
];

describe("the Use in checklist", () => {
  it("starts with what the app launches, plus the server that asked", () => {
    expect(initialChoice(servers, ["broken", "gone"], null)).toEqual(["broken"]);
    expect(initialChoice(servers, ["ok"], "new")).toEqual(["ok", "new"]);
    expect(initialChoice(servers, [], "broken")).toEqual(["broken"]);
  });
  it("offers only working servers to an app that launches none yet", () => {
    expect(initialChoice(servers, [], null)).toEqual(["ok", "plain"]);
  });
  it("ticks one of servers that are the same launch", () => {
    const twice = [...servers, { name: "plain-2", health: "verified", target: "https://plain.example/mcp" }];
    expect(initialChoice(twice, [], null)).toEqual(["ok", "plain"]);
    expect(initialChoice(twice, ["plain-2"], null)).toEqual(["plain-2"]);
  });
});
