import { describe, expect, it } from "vitest";
import { groupSecret, isTotpCode, recoveryCodesText, totpCode } from "./mfa.ts";

describe("two-factor helpers", () => {
  it("groups the secret by four", () => {
    expect(groupSecret("ABCDEFGHIJ")).toBe("ABCD EFGH IJ");
    expect(groupSecret("ABCDEFGH")).toBe("ABCD EFGH");
  });
  it("writes every recovery code on its own line under what they are", () => {
    const text = recoveryCodesText(["aaaa-bbbb", "cccc-dddd"], "me@example.com", "Tern");
    expect(text.split("\n")).toEqual(expect.arrayContaining(["aaaa-bbbb", "cccc-dddd"]));
    expect(text).toMatch(/^Tern recovery codes for me@example.com/);
  });
  it("takes a code with spaces, refuses anything but six digits", () => {
    expect(totpCode("123 456")).toBe("123456");
    expect(isTotpCode("123 456")).toBe(true);
    expect(isTotpCode("12345")).toBe(false);
    expect(isTotpCode("abcd-efgh")).toBe(false);
  });
});
