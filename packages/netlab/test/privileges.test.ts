import { describe, expect, it } from "vitest";
import { namespaceBlocker, privilegedTestsEnabled } from "../src/privileges.ts";

describe("privilegedTestsEnabled", () => {
  it("reports a missing command as the blocker", () => {
    const blocker = namespaceBlocker(["tern-no-such-command-xyz"]);
    expect(blocker).toMatch(/not Linux|not running as root|not available|'tern-no-such-command-xyz' is not installed/);
  });
  it("turns a skip into a failure when TERN_REQUIRE_PRIVILEGED=1", () => {
    expect(() => privilegedTestsEnabled("demo", ["tern-no-such-command-xyz"], { TERN_REQUIRE_PRIVILEGED: "1" })).toThrow(
      /demo: needs root.*TERN_REQUIRE_PRIVILEGED=1 makes this a failure/,
    );
    expect(privilegedTestsEnabled("demo", ["tern-no-such-command-xyz"], {})).toBe(false);
  });
});
