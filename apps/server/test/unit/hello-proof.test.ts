/** The hello's proof, checked without a database: key, challenge, device, machine id and the host it was signed for. */
import { helloProofText, PROTOCOL_VERSION } from "@tern/protocol";
import { signText, simDeviceKey } from "@tern/test-harness/src/simulator/index.ts";
import { describe, expect, it } from "vitest";
import { checkHelloProof } from "../../src/services/devices/identity/link-proof.ts";

const key = simDeviceKey("unit", 1);
const link = { deviceId: "d-1", nonce: "n".repeat(43), host: "tern.example.net", publicKey: key.publicKey };

function hello(url: string, over: Partial<{ nonce: string; deviceId: string; machineId: string; signer: typeof key }> = {}) {
  const machineId = over.machineId ?? "machine-0001";
  const text = helloProofText({ nonce: over.nonce ?? link.nonce, deviceId: over.deviceId ?? link.deviceId, machineId, url });
  const signer = over.signer ?? key;
  return {
    type: "hello" as const,
    protocolVersion: PROTOCOL_VERSION,
    agentVersion: "t",
    machineId: "machine-0001",
    hostname: "h",
    appliedHash: null,
    proof: { publicKey: signer.publicKey, url, signature: signText(signer.privateKey, text) },
  };
}

describe("checkHelloProof", () => {
  it("accepts the device key's signature over this link, with the scheme's default port left out", () => {
    expect(checkHelloProof(hello("wss://tern.example.net/api/connect/ws"), link)).toEqual({ ok: true, publicKey: key.publicKey });
    expect(checkHelloProof(hello("wss://tern.example.net/api/connect/ws"), { ...link, host: "tern.example.net:443" }).ok).toBe(
      true,
    );
    // A device registered before keys: the key it presents (its token vouched for the link).
    expect(checkHelloProof(hello("wss://tern.example.net/api/connect/ws"), { ...link, publicKey: null }).ok).toBe(true);
  });

  it("refuses another key, another challenge, device or machine id, and another host", () => {
    const url = "wss://tern.example.net/api/connect/ws";
    const other = simDeviceKey("unit", 2);
    expect(checkHelloProof(hello(url, { signer: other }), link)).toMatchObject({ ok: false, message: /not this device's/ });
    expect(checkHelloProof(hello(url, { nonce: "m".repeat(43) }), link)).toMatchObject({ ok: false, message: /does not verify/ });
    expect(checkHelloProof(hello(url, { deviceId: "d-2" }), link).ok).toBe(false);
    expect(checkHelloProof(hello(url, { machineId: "machine-0002" }), link).ok).toBe(false);
    const relayed = checkHelloProof(hello("wss://evil.example.org/api/connect/ws"), link);
    expect(relayed).toMatchObject({ ok: false, message: /signed for evil\.example\.org.*TERN_DEVICE_HOSTS/ });
    const { proof: _, ...bare } = hello(url);
    expect(checkHelloProof(bare, link)).toMatchObject({ ok: false, message: /no identity proof/ });
  });

  it("accepts the public name of TERN_DEVICE_HOSTS behind a proxy that rewrites Host", () => {
    const behind = { ...link, host: "10.0.0.5:3000" };
    expect(checkHelloProof(hello("wss://tern.example.net/api/connect/ws"), behind).ok).toBe(false);
    expect(checkHelloProof(hello("wss://tern.example.net/api/connect/ws"), behind, ["tern.example.net"]).ok).toBe(true);
  });
});
