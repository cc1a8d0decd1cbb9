/**
 * Remote worker VPN: the server certificate remote users' VPN clients check.
 * `update-certificate` issues a fresh self-signed certificate; its private key
 * is stored encrypted with the server key and never returned.
 */
import { Hostname } from "@tern/protocol";
import { z } from "zod";
import { issueSelfSignedCertificate } from "../certificate.ts";
import { type AppDefinition, appSecretAad, defineAction } from "../types.ts";

const UpdateCertificateParams = z.strictObject({
  validityDays: z.coerce.number().int().min(1).max(825).default(365),
  commonName: Hostname.max(64).default("remote-vpn.tern.invalid"),
});

export const remoteVpn: AppDefinition = {
  id: "remote-vpn",
  name: "Remote worker VPN",
  description: "IKEv2 access for remote workers to the organization's LANs, with a server certificate the server manages.",
  actions: {
    "update-certificate": defineAction({
      description:
        "Issue a new self-signed server certificate (ECDSA P-256). Params: validityDays 1-825 (default 365), commonName (a host name).",
      params: UpdateCertificateParams,
      async run({ ctx, purchaseId, state }, params) {
        const cert = await issueSelfSignedCertificate(params);
        const certificate = {
          pem: cert.certificatePem,
          fingerprintSha256: cert.fingerprintSha256,
          serialNumber: cert.serialNumber,
          subject: cert.subject,
          notBefore: cert.notBefore,
          notAfter: cert.notAfter,
        };
        return {
          state: {
            ...state,
            certificate,
            privateKeyEnc: ctx.keyring.encrypt(cert.privateKeyPem, appSecretAad(purchaseId)),
          },
          result: certificate,
          summary: `certificate ${cert.fingerprintSha256.slice(0, 23)}… valid until ${cert.notAfter}`,
        };
      },
    }),
  },
};
