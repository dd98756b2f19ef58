import { describe, expect, it } from "vitest";
import { initialChoice } from "./exportChoice";

const servers = [
  { name: "ok", health: "verified" },
  { name: "plain", health: "working" },
  { name: "broken", health: "failed" },
  { name: "new", health: "unchecked" },
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
});
