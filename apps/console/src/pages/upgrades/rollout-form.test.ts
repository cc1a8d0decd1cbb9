import { TernApiError } from "@tern/client";
import { describe, expect, it } from "vitest";
import { ROLLOUT_DEFAULTS, type RolloutFormState, rolloutFieldErrors, rolloutRequest } from "./rollout-form.ts";

const form = (part: Partial<RolloutFormState>): RolloutFormState => ({ ...ROLLOUT_DEFAULTS, package: "p1", ...part });

describe("rolloutRequest", () => {
  it("targets tags as the device selection's `tags in`, with the numbers as typed", () => {
    expect(rolloutRequest(form({ targetKind: "tags", tags: ["site:paris", "edge"] }))).toEqual({
      package: "p1",
      target: { filter: [{ key: "tags", op: "in", val: ["site:paris", "edge"] }] },
      canaryPercent: 10,
      batchSize: 10,
      healthTimeoutSec: 300,
    });
  });

  it("targets every device, an agent version, or devices by id", () => {
    expect(rolloutRequest(form({ targetKind: "all" })).target).toEqual({ filter: [] });
    expect(rolloutRequest(form({ targetKind: "version", version: "0.1.0" })).target).toEqual({
      filter: [{ key: "versions.agent", op: "==", val: "0.1.0" }],
    });
    expect(rolloutRequest(form({ targetKind: "devices", deviceIds: ["d1", "d2"] })).target).toEqual({ deviceIds: ["d1", "d2"] });
  });

  it("sends the window only when asked, trimmed, and leaves emptied numbers to the API's defaults", () => {
    const body = rolloutRequest(
      form({
        windowOn: true,
        windowStart: " 23:00 ",
        windowEnd: "02:00",
        canaryPercent: "",
        batchSize: 5,
        healthTimeoutSec: "60",
      }),
    );
    expect(body.window).toEqual({ start: "23:00", end: "02:00" });
    expect(body).not.toHaveProperty("canaryPercent");
    expect(body.batchSize).toBe(5);
    expect(body.healthTimeoutSec).toBe(60);
    expect(rolloutRequest(form({ windowOn: false }))).not.toHaveProperty("window");
  });

  it("sends no package as empty for the API to refuse on that field", () => {
    expect(rolloutRequest(form({ package: null })).package).toBe("");
  });
});

describe("rolloutFieldErrors", () => {
  it("puts each detail on its field with the code, the window's on start or end", () => {
    const error = new TernApiError("invalid", "VALIDATION_FAILED", 400, [
      { path: "canaryPercent", message: "too big" },
      { path: "window.end", message: "must be HH:MM (UTC)" },
      { path: "target.filter.0.val", message: "bad" },
      { path: "target", message: "no device" },
    ]);
    const { fields, rest } = rolloutFieldErrors(error);
    expect(fields).toEqual({
      canaryPercent: "too big (VALIDATION_FAILED)",
      windowEnd: "must be HH:MM (UTC) (VALIDATION_FAILED)",
      target: "bad (VALIDATION_FAILED); no device (VALIDATION_FAILED)",
    });
    expect(rest).toBe(false);
  });

  it("leaves to the form's alert what no field takes", () => {
    expect(rolloutFieldErrors(new TernApiError("gone", "NOT_FOUND", 404)).rest).toBe(true);
    expect(rolloutFieldErrors(new TernApiError("x", "VALIDATION_FAILED", 400, [{ path: "extra", message: "unknown" }]))).toEqual({
      fields: {},
      rest: true,
    });
    expect(rolloutFieldErrors(new Error("offline")).rest).toBe(true);
    expect(rolloutFieldErrors(null)).toEqual({ fields: {}, rest: false });
  });
});
