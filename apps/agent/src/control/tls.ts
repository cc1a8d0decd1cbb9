/**
 * Whom the agent trusts for the server's TLS certificate: the certificates of
 * `--ca-file` alone when given (a pinned private CA: no public CA can stand in
 * for the server), else Node's bundled roots plus the system's CA bundle (so a
 * CA added with update-ca-certificates works too).
 */
import { readFile } from "node:fs/promises";
import { rootCertificates } from "node:tls";
import { AgentError } from "../errors.ts";

/** Where distributions keep their CA bundle (Debian/Ubuntu, Fedora/RHEL, Alpine, openSUSE). */
const SYSTEM_BUNDLES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
  "/etc/ssl/ca-bundle.pem",
];

export interface TlsTrust {
  /** The `ca` option of https/ws; undefined = Node's own roots. */
  ca: string[] | undefined;
  /** Where the trust comes from, for messages. */
  source: string;
}

export async function loadTrust(caFile: string | undefined): Promise<TlsTrust> {
  if (caFile) {
    const pem = await readFile(caFile, "utf8").catch((err: NodeJS.ErrnoException) => {
      throw new AgentError("USAGE", `cannot read the CA file ${caFile}: ${err.code ?? err.message}`);
    });
    if (!pem.includes("-----BEGIN CERTIFICATE-----"))
      throw new AgentError("USAGE", `the CA file ${caFile} holds no PEM certificate`);
    return { ca: [pem], source: caFile };
  }
  for (const bundle of SYSTEM_BUNDLES) {
    const pem = await readFile(bundle, "utf8").catch(() => null);
    if (pem?.includes("-----BEGIN CERTIFICATE-----")) return { ca: [...rootCertificates, pem], source: bundle };
  }
  return { ca: undefined, source: "Node's bundled roots" };
}
