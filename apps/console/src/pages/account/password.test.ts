import { describe, expect, it } from "vitest";
import { describeAgent, passwordProblem } from "./password.ts";

describe("passwordProblem", () => {
  it("accepts a new, long enough, repeated password", () => {
    expect(passwordProblem("old-secret", "new-secret-1", "new-secret-1")).toBeNull();
  });
  it("says what is wrong", () => {
    expect(passwordProblem("", "new-secret-1", "new-secret-1")).toMatch(/current/);
    expect(passwordProblem("old", "short", "short")).toMatch(/8 characters/);
    expect(passwordProblem("same-secret", "same-secret", "same-secret")).toMatch(/differ from the current/);
    expect(passwordProblem("old-secret", "new-secret-1", "new-secret-2")).toMatch(/two new passwords differ/);
  });
});

describe("describeAgent", () => {
  it("names the browser and system", () => {
    expect(
      describeAgent("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"),
    ).toBe("Chromium on Linux");
    expect(describeAgent("Mozilla/5.0 (Windows NT 10.0; rv:120.0) Gecko/20100101 Firefox/120.0")).toBe("Firefox on Windows");
    expect(describeAgent("tern-cli/1.0")).toBe("tern-cli/1.0");
    expect(describeAgent("")).toBe("unknown client");
  });
});
