/**
 * The device side of a websocket link proves its key in its hello: the
 * signature of the link's one-time challenge with the device id, the machine
 * id and the URL it connected to (protocol `helloProofText`). Checked here
 * without the database (the key came with the upgrade), so a link that cannot
 * prove it never costs a transaction.
 */
import { type Hello, helloProofText } from "@tern/protocol";
import { verifyDeviceSignature } from "./signatures.ts";

export type HelloProofOutcome = { ok: true; publicKey: string } | { ok: false; message: string };

/** `host:port` without the scheme's default port, lower case (so `wss://h` matches `Host: h:443` and `h`). */
export function normalHost(host: string, scheme: "ws" | "wss" | "http" | "https" | null = null): string {
  const h = host.toLowerCase();
  if (scheme === "ws" || scheme === "http") return h.replace(/:80$/, "");
  if (scheme === "wss" || scheme === "https") return h.replace(/:443$/, "");
  return h.replace(/:(80|443)$/, "");
}

export function checkHelloProof(
  hello: Hello,
  link: { deviceId: string; nonce: string; host: string; publicKey: string | null },
  /** Hosts the server is also known as (TERN_DEVICE_HOSTS). */
  alsoKnownAs: readonly string[] = [],
): HelloProofOutcome {
  const proof = hello.proof;
  if (!proof) return { ok: false, message: "the hello carries no identity proof: this server needs agent protocol 2" };
  if (link.publicKey !== null && proof.publicKey !== link.publicKey)
    return { ok: false, message: "the hello is signed with a key that is not this device's" };
  let url: URL;
  try {
    url = new URL(proof.url);
  } catch {
    return { ok: false, message: "the signed URL is not a URL" };
  }
  const scheme = url.protocol.replace(/:$/, "") as "ws" | "wss";
  const signedFor = normalHost(url.host, scheme);
  if (link.host && signedFor !== normalHost(link.host) && !alsoKnownAs.some((h) => normalHost(h) === signedFor)) {
    return {
      ok: false,
      message: `the hello was signed for ${url.host}, but this server was reached as ${link.host} (a proxy that rewrites Host: list the public name in TERN_DEVICE_HOSTS)`,
    };
  }
  const text = helloProofText({ nonce: link.nonce, deviceId: link.deviceId, machineId: hello.machineId, url: proof.url });
  if (!verifyDeviceSignature(proof.publicKey, text, proof.signature))
    return { ok: false, message: "the hello's signature does not verify (wrong key, device id or challenge)" };
  return { ok: true, publicKey: proof.publicKey };
}
