import { TernApiError } from "@tern/client";
import { describe, expect, it } from "vitest";
import { applyPreset, fieldErrors, fromPeer, PEER_DEFAULTS, peerBody } from "./peer-form.ts";

/** AWS's preset as GET /api/peers/presets answers it (packages/protocol/src/peer-presets.ts). */
const AWS = {
  id: "aws-site-to-site",
  vendor: "AWS Site-to-Site VPN",
  source: "https://docs.aws.amazon.com/vpn/latest/s2svpn/VPNTunnels.html",
  note: "Tunnel options …",
  values: {
    ikeVersion: 2 as const,
    ikeCryptoAlg: "aes-cbc" as const,
    ikeKeySize: 256 as const,
    ikeIntegAlg: "sha256" as const,
    ikeDhGroup: "modp2048" as const,
    espCryptoAlg: "aes-cbc" as const,
    espKeySize: 256 as const,
    espIntegAlg: "sha256" as const,
    espDhGroup: "modp2048" as const,
    pfs: true,
    ikeLifeTime: 28800,
    sessionLifeTime: 3600,
    dpdDelay: 10,
  },
};

describe("applyPreset", () => {
  const typed = {
    ...PEER_DEFAULTS,
    name: "aws",
    remoteIP: "203.0.113.9",
    ikeDhGroup: "ecp384" as const,
    ikeKeySize: "128" as const,
  };
  it("fills the proposals, lifetimes, PFS, IKE version and DPD from the preset; keeps the rest", () => {
    const state = applyPreset(typed, AWS);
    expect(state).toMatchObject({
      name: "aws",
      remoteIP: "203.0.113.9",
      preset: "aws-site-to-site",
      ikeDhGroup: "modp2048",
      ikeKeySize: "256",
      ikeLifeTime: 28800,
      sessionLifeTime: 3600,
      pfs: true,
      ikeVersion: 2,
      dpdDelay: 10,
    });
    expect(peerBody(state)).toMatchObject({ preset: "aws-site-to-site", ikeLifeTime: 28800, pfs: true, ikeKeySize: 256 });
  });
  it("a field changed after the preset is sent as changed, with the preset (the explicit field wins on the API)", () => {
    const state = {
      ...applyPreset(typed, { ...AWS, values: { ...AWS.values, ikeKeySize: 128 as const } }),
      sessionLifeTime: 1800,
    };
    expect(state.ikeKeySize).toBe("128");
    expect(peerBody(state)).toMatchObject({ preset: "aws-site-to-site", sessionLifeTime: 1800, ikeLifeTime: 28800 });
  });
  it("None drops the preset and keeps the values shown; a value the preset lacks keeps the form's", () => {
    const chosen = applyPreset(typed, AWS);
    expect(applyPreset(chosen, null)).toEqual({ ...chosen, preset: null });
    const partial = applyPreset(typed, { ...AWS, values: { pfs: true } });
    expect(partial).toEqual({ ...typed, pfs: true, preset: "aws-site-to-site" });
  });
  it("an edited peer shows its preset and its stored IKE version and DPD", () => {
    const state = fromPeer({
      name: "p",
      remoteIP: "198.51.100.4",
      remoteTrafficSelectors: [],
      preset: "gcp-ha-vpn",
      ikeVersion: 1,
      dpdDelay: 30,
    } as never);
    expect(state).toMatchObject({ preset: "gcp-ha-vpn", ikeVersion: 1, dpdDelay: 30 });
    expect(fromPeer({ name: "p", remoteIP: "198.51.100.4", remoteTrafficSelectors: [] } as never).preset).toBeNull();
  });
});

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
