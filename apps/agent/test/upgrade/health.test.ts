/** When an upgraded agent commits (upgrade/health.ts): connected, config applied if there was one, tunnels up again. */
import { describe, expect, it } from "vitest";
import { missingForCommit } from "../../src/upgrade/health.ts";

const healthy = { connected: true, appliedHash: "h1", applying: false, lastApplyFailed: false, tunnelsUp: ["a", "b", "c"] };

describe("upgrade health", () => {
  it("commits when connected, applied and every tunnel up before is up again", () => {
    expect(missingForCommit({ tunnelsUp: ["a", "b"], hadConfig: true }, healthy)).toBeNull();
  });
  it("waits for the server link", () => {
    expect(missingForCommit({ tunnelsUp: [], hadConfig: false }, { ...healthy, connected: false })).toBe(
      "not connected to the server",
    );
  });
  it("waits for the config when the old version had one: none yet, applying, or the last apply failed", () => {
    for (const v of [{ appliedHash: null }, { applying: true }, { lastApplyFailed: true }])
      expect(missingForCommit({ tunnelsUp: [], hadConfig: true }, { ...healthy, ...v })).toBe("configuration not applied");
    expect(missingForCommit({ tunnelsUp: [], hadConfig: false }, { ...healthy, appliedHash: null })).toBeNull();
  });
  it("names the tunnels that were up before and are not now", () => {
    expect(missingForCommit({ tunnelsUp: ["a", "x", "y"], hadConfig: false }, healthy)).toBe("tunnels not up again: x, y");
  });
});
