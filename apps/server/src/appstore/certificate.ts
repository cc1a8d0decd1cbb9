/**
 * X.509 for the app store: an organization CA (ECDSA P-256, SHA-256) and the
 * server and user certificates it issues, made with @peculiar/x509 on Node's
 * WebCrypto (already a dependency: maintained, typed, ECDSA support, no
 * OpenSSL child processes). Private keys leave these functions only as PKCS#8
 * PEM to the caller, which stores them encrypted.
 */
// tsyringe (used by @peculiar/x509) needs the Reflect metadata API before the library loads.
import "reflect-metadata";
import { randomBytes, type webcrypto, X509Certificate } from "node:crypto";
import * as x509 from "@peculiar/x509";

/** What callers may show about a certificate (never the key). */
export interface CertificateInfo {
  pem: string;
  /** SHA-256 of the DER certificate, colon-separated upper-case hex (as `openssl x509 -fingerprint -sha256` prints it). */
  fingerprintSha256: string;
  serialNumber: string;
  subject: string;
  issuer: string;
  notBefore: string;
  notAfter: string;
}

export interface IssuedCertificate extends CertificateInfo {
  privateKeyPem: string;
}

/** A CA as stored: certificate and PKCS#8 key in PEM. */
export interface CaMaterial {
  certificatePem: string;
  privateKeyPem: string;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

function pem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der)
    .toString("base64")
    .replace(/(.{64})/g, "$1\n")
    .replace(/\n$/, "");
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

function pemBody(text: string): Buffer {
  return Buffer.from(text.replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""), "base64");
}

/** 16 random bytes with the top bit clear: a positive serial, unique with overwhelming probability (RFC 5280 4.1.2.2). */
function serialNumber(): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  return serial.toString("hex");
}

function validity(days: number, now = new Date()) {
  // Back-dated a minute: a router whose clock is slightly behind still accepts a fresh certificate.
  return { notBefore: new Date(now.getTime() - 60_000), notAfter: new Date(now.getTime() + days * 86_400_000) };
}

async function describe(cert: x509.X509Certificate, key: webcrypto.CryptoKey): Promise<IssuedCertificate> {
  const text = cert.toString("pem");
  const certificatePem = text.endsWith("\n") ? text : `${text}\n`;
  // Read back with Node's own parser: what the caller reports is what a TLS or IKE stack will see.
  const parsed = new X509Certificate(certificatePem);
  return {
    pem: certificatePem,
    privateKeyPem: pem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", key)),
    fingerprintSha256: parsed.fingerprint256,
    // The library's hex (as generated, even length): what the CRL lists.
    serialNumber: cert.serialNumber.toLowerCase(),
    subject: parsed.subject,
    issuer: parsed.issuer,
    notBefore: new Date(parsed.validFrom).toISOString(),
    notAfter: new Date(parsed.validTo).toISOString(),
  };
}

/** The public part of an issued certificate. */
export function certificateInfo(c: IssuedCertificate): CertificateInfo {
  const { privateKeyPem: _, ...info } = c;
  return info;
}

/** A new self-signed CA certificate (basicConstraints CA, path length 0: it signs only end-entity certificates). */
export async function createCa(options: { commonName: string; validityDays: number }): Promise<IssuedCertificate> {
  const keys = await crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [options.commonName] }],
    ...validity(options.validityDays),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return describe(cert, keys.privateKey);
}

/**
 * An end-entity certificate signed by `ca`: `server` (serverAuth, the name as
 * DNS subject alternative name, which IKEv2 clients match against the server
 * identity) or `client` (clientAuth, the user name as subject and SAN).
 */
export async function issueFromCa(
  ca: CaMaterial,
  options: { commonName: string; validityDays: number; usage: "server" | "client" },
): Promise<IssuedCertificate> {
  const caCert = new x509.X509Certificate(ca.certificatePem);
  const signingKey = await crypto.subtle.importKey("pkcs8", new Uint8Array(pemBody(ca.privateKeyPem)), ALGORITHM, false, [
    "sign",
  ]);
  const keys = await crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const san =
    options.usage === "server"
      ? { type: "dns" as const, value: options.commonName }
      : options.commonName.includes("@")
        ? { type: "email" as const, value: options.commonName }
        : { type: "dns" as const, value: options.commonName };
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [options.commonName] }],
    issuer: caCert.subjectName,
    ...validity(options.validityDays),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([
        options.usage === "server" ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension([san]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
    ],
  });
  return describe(cert, keys.privateKey);
}

/**
 * A CRL of `ca` listing `revoked` serial numbers (hex). The router loads it
 * with the CA, so a removed certificate user is refused although the
 * certificate itself is still within its validity.
 */
export async function issueCrl(
  ca: CaMaterial,
  revoked: readonly { serialNumber: string; at: string }[],
  validityDays = 365,
): Promise<string> {
  const caCert = new x509.X509Certificate(ca.certificatePem);
  const signingKey = await crypto.subtle.importKey("pkcs8", new Uint8Array(pemBody(ca.privateKeyPem)), ALGORITHM, false, [
    "sign",
  ]);
  const now = new Date();
  const crl = await x509.X509CrlGenerator.create({
    issuer: caCert.subjectName,
    thisUpdate: new Date(now.getTime() - 60_000),
    nextUpdate: new Date(now.getTime() + validityDays * 86_400_000),
    signingAlgorithm: ALGORITHM,
    signingKey,
    entries: revoked.map((r) => ({ serialNumber: r.serialNumber, revocationDate: new Date(r.at) })),
    extensions: [await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey)],
  });
  const text = crl.toString("pem");
  return text.endsWith("\n") ? text : `${text}\n`;
}
