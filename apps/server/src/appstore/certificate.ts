/**
 * Self-signed X.509 server certificates (ECDSA P-256, SHA-256) made with
 * @peculiar/x509 on WebCrypto. The key never leaves this function in clear
 * except to the caller, which stores it encrypted.
 */
// tsyringe (used by @peculiar/x509) needs the Reflect metadata API before the library loads.
import "reflect-metadata";
import { randomBytes, X509Certificate } from "node:crypto";
import * as x509 from "@peculiar/x509";

export interface IssuedCertificate {
  certificatePem: string;
  privateKeyPem: string;
  /** SHA-256 of the DER certificate, colon-separated upper-case hex (as `openssl x509 -fingerprint -sha256` prints it). */
  fingerprintSha256: string;
  serialNumber: string;
  subject: string;
  notBefore: string;
  notAfter: string;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

function pem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der)
    .toString("base64")
    .replace(/(.{64})/g, "$1\n")
    .replace(/\n$/, "");
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

export async function issueSelfSignedCertificate(options: {
  commonName: string;
  validityDays: number;
  now?: Date;
}): Promise<IssuedCertificate> {
  const notBefore = options.now ?? new Date();
  const notAfter = new Date(notBefore.getTime() + options.validityDays * 86_400_000);
  const keys = await crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  // 16 random bytes with the top bit clear: a positive serial, unique with overwhelming probability (RFC 5280 4.1.2.2).
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString("hex"),
    name: [{ CN: [options.commonName] }],
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: "dns", value: options.commonName }]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const certificatePem = cert.toString("pem");
  // Read back with Node's own parser: what the caller reports is what a TLS stack will see.
  const parsed = new X509Certificate(certificatePem);
  return {
    certificatePem: certificatePem.endsWith("\n") ? certificatePem : `${certificatePem}\n`,
    privateKeyPem: pem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", keys.privateKey)),
    fingerprintSha256: parsed.fingerprint256,
    serialNumber: parsed.serialNumber,
    subject: parsed.subject,
    notBefore: new Date(parsed.validFrom).toISOString(),
    notAfter: new Date(parsed.validTo).toISOString(),
  };
}
