/**
 * The remote worker VPN's stored state (purchased_apps.state): the
 * organization CA, the server certificate, the users, the CRL. Fields ending
 * in `Enc` are keyring-encrypted (associated data: the purchase id) and never
 * leave the server except inside a device's sealed desired config.
 */
import type { Keyring } from "../../../secrets/keyring.ts";
import { type CaMaterial, type CertificateInfo, createCa, issueCrl, issueFromCa } from "../../certificate.ts";
import { appSecretAad } from "../../types.ts";

export const DEFAULT_SERVER_ID = "remote-vpn.tern.invalid";
export const CA_VALIDITY_DAYS = 3650;
export const USER_CERT_VALIDITY_DAYS = 365;

export interface RemoteVpnUser {
  name: string;
  auth: "eap" | "certificate";
  addedAt: string;
  /** Certificate users: the certificate issued (its key was handed out once and is not kept). */
  certificate?: Pick<CertificateInfo, "serialNumber" | "fingerprintSha256" | "notAfter">;
}

export interface RemoteVpnState {
  serverId?: string;
  ca?: CertificateInfo;
  caKeyEnc?: string;
  certificate?: CertificateInfo;
  /** The server certificate's key. */
  privateKeyEnc?: string;
  users?: RemoteVpnUser[];
  /** JSON object user name → EAP password. */
  eapPasswordsEnc?: string;
  /** Serial numbers of removed certificate users, listed in `crl`. */
  revoked?: { serialNumber: string; at: string }[];
  crl?: string;
  [key: string]: unknown;
}

export const asState = (s: Record<string, unknown>) => s as RemoteVpnState;

export function eapPasswords(keyring: Keyring, purchaseId: string, state: RemoteVpnState): Record<string, string> {
  if (!state.eapPasswordsEnc) return {};
  return JSON.parse(keyring.decrypt(state.eapPasswordsEnc, appSecretAad(purchaseId))) as Record<string, string>;
}

export function sealEapPasswords(keyring: Keyring, purchaseId: string, passwords: Record<string, string>): string {
  return keyring.encrypt(JSON.stringify(passwords), appSecretAad(purchaseId));
}

/** The CA with its key in clear (for signing only, never stored so). */
export function caMaterial(keyring: Keyring, purchaseId: string, state: RemoteVpnState): CaMaterial | null {
  if (!state.ca || !state.caKeyEnc) return null;
  return { certificatePem: state.ca.pem, privateKeyPem: keyring.decrypt(state.caKeyEnc, appSecretAad(purchaseId)) };
}

/**
 * The organization CA, created on first use. Returns the state with it and the
 * material to sign with.
 */
export async function ensureCa(
  keyring: Keyring,
  purchaseId: string,
  orgName: string,
  state: RemoteVpnState,
): Promise<{ state: RemoteVpnState; ca: CaMaterial }> {
  const existing = caMaterial(keyring, purchaseId, state);
  if (existing) return { state, ca: existing };
  const issued = await createCa({ commonName: `${orgName} remote VPN CA`.slice(0, 64), validityDays: CA_VALIDITY_DAYS });
  const { privateKeyPem, ...info } = issued;
  return {
    state: { ...state, ca: info, caKeyEnc: keyring.encrypt(privateKeyPem, appSecretAad(purchaseId)) },
    ca: { certificatePem: issued.pem, privateKeyPem },
  };
}

/** A new server certificate for `serverId` from the CA, replacing the current one. */
export async function withServerCertificate(
  keyring: Keyring,
  purchaseId: string,
  state: RemoteVpnState,
  ca: CaMaterial,
  serverId: string,
  validityDays: number,
): Promise<RemoteVpnState> {
  const issued = await issueFromCa(ca, { commonName: serverId, validityDays, usage: "server" });
  const { privateKeyPem, ...info } = issued;
  return { ...state, serverId, certificate: info, privateKeyEnc: keyring.encrypt(privateKeyPem, appSecretAad(purchaseId)) };
}

/** The CRL re-signed with the current revocation list (always present once there is a CA: the router then has one to check). */
export async function withCrl(state: RemoteVpnState, ca: CaMaterial): Promise<RemoteVpnState> {
  return { ...state, crl: await issueCrl(ca, state.revoked ?? []) };
}
