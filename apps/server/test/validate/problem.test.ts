import { ErrorBody } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { invalid, problem, problemsToErrorBody } from "../../src/validate/index.ts";

describe("problemsToErrorBody", () => {
  it("is null without problems", () => expect(problemsToErrorBody([])).toBeNull());

  it("uses the one problem's message and code", () => {
    const body = problemsToErrorBody([problem("LAN_OVERLAPPING", "interfaces.2.IPv4", "overlaps")]);
    expect(body).toEqual({
      error: "overlaps",
      code: "LAN_OVERLAPPING",
      details: [{ path: "interfaces.2.IPv4", message: "overlaps" }],
    });
    expect(ErrorBody.parse(body)).toEqual(body);
  });

  it("leads with plain validation errors, then names how many more there are", () => {
    const body = problemsToErrorBody([
      problem("LAN_OVERLAPPING", "interfaces.2.IPv4", "overlaps"),
      invalid("dhcp.0.rangeEnd", "outside"),
      problem("CONFLICT", "virtualRouterId", "taken"),
    ]);
    expect(body?.code).toBe("VALIDATION_FAILED");
    expect(body?.error).toBe("outside (and 2 more problems)");
    expect(body?.details.map((d) => d.path)).toEqual(["interfaces.2.IPv4", "dhcp.0.rangeEnd", "virtualRouterId"]);
  });

  it("prefers LAN_OVERLAPPING over CONFLICT, so allowOverlapping callers can filter by code", () => {
    const body = problemsToErrorBody([problem("CONFLICT", "a", "x"), problem("LAN_OVERLAPPING", "b", "y")]);
    expect(body?.code).toBe("LAN_OVERLAPPING");
    expect(body?.error).toBe("y (and 1 more problem)");
  });
});
