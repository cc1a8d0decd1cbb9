import { TernApiError } from "@tern/client";
import { describe, expect, it } from "vitest";
import { fieldErrors, fromPeer, PEER_DEFAULTS, peerBody } from "./peer-form.ts";

describe("peerBody", () => {
  it("sends the defaults of the protocol, numbers as numbers, and the key only when typed", () => {
    const body = peerBody({ ...PEER_DEFAULTS, name: " aws ", remoteIP: "203.0.113.9", remoteTrafficSelectors: ["10.9.0.0/16"] });
    expect(body).toMatchObject({ name: "aws", remoteIP: "203.0.113.9", ikeKeySize: 256, espKeySize: 256, ikeLifeTime: 86400 });
    expect(body).not.toHaveProperty("psk");
    expect(peerBody({ ...PEER_DEFAULTS, psk: "s3cret-key" }).psk).toBe("s3cret-key");
  });
  it("round-trips a peer through the form (without its key, which the API never returns)", () => {
    const state = fromPeer({
      id: "p1",
      org: "o1",
      name: "gcp",
      remoteIP: "198.51.100.4",
      remoteTrafficSelectors: ["10.1.0.0/16"],
      ikeKeySize: 128,
      pfs: true,
      pskSet: true,
      tunnels: 1,
      createdAt: "2026-01-01T00:00:00Z",
      updatedAt: "2026-01-01T00:00:00Z",
    } as never);
    expect(state).toMatchObject({ name: "gcp", ikeKeySize: "128", espKeySize: "256", pfs: true, psk: "" });
    expect(peerBody(state)).toMatchObject({ ikeKeySize: 128, remoteTrafficSelectors: ["10.1.0.0/16"] });
  });
});

describe("fieldErrors", () => {
  it("puts each detail on the field its path names, with the machine code", () => {
    const error = new TernApiError("invalid body", "VALIDATION_FAILED", 400, [
      { path: "remoteIP", message: "Invalid IPv4 address" },
      { path: "remoteTrafficSelectors.0", message: "Invalid network" },
      { path: "nonsense", message: "x" },
    ]);
    const { fields, rest } = fieldErrors(error);
    expect(fields.remoteIP).toBe("Invalid IPv4 address (VALIDATION_FAILED)");
    expect(fields.remoteTrafficSelectors).toContain("VALIDATION_FAILED");
    expect(rest).toBe(true);
  });
  it("a name conflict goes on the name; the tunnel's fields on the device end", () => {
    expect(fieldErrors(new TernApiError("name taken", "CONFLICT", 409)).fields.name).toBe("name taken (CONFLICT)");
    const tunnel = new TernApiError("invalid body", "VALIDATION_FAILED", 400, [{ path: "interfaceA", message: "not a WAN" }]);
    expect(fieldErrors(tunnel, "tunnel")).toEqual({ fields: { iface: "not a WAN (VALIDATION_FAILED)" }, rest: false });
  });
  it("an error without details is shown as a whole", () => {
    expect(fieldErrors(new TernApiError("no", "FORBIDDEN", 403)).rest).toBe(true);
  });
});
