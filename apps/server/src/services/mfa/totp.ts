/**
 * TOTP (RFC 6238) through otplib: SHA-1, 6 digits, 30-second steps, the
 * defaults every authenticator app understands. A code is accepted one step
 * either side of now (clock drift), and never for a step at or before the last
 * one accepted (a replayed or older code).
 */
import { generateSecret, generateURI, verify } from "otplib";

export const TOTP_PERIOD = 30 as const;
export const TOTP_DIGITS = 6 as const;
const ISSUER = "Tern";

/** A new base32 secret of 160 bits (RFC 4226 recommends at least 128). */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

export function otpauthUrl(secret: string, accountLabel: string): string {
  return generateURI({ issuer: ISSUER, label: accountLabel, secret, digits: TOTP_DIGITS, period: TOTP_PERIOD });
}

/** The time step the code belongs to when it is valid and newer than `afterTimeStep`, else null. */
export async function verifyTotp(
  secret: string,
  code: string,
  afterTimeStep: number | null,
  epochSeconds = Math.floor(Date.now() / 1000),
): Promise<number | null> {
  const result = await verify({
    secret,
    token: code,
    epoch: epochSeconds,
    epochTolerance: TOTP_PERIOD,
    ...(afterTimeStep !== null ? { afterTimeStep } : {}),
  }).catch(() => null);
  // otplib's TOTP result carries the matched time step (its typings of the functional API omit it).
  const step = result?.valid ? (result as { timeStep?: unknown }).timeStep : undefined;
  if (typeof step !== "number") return null;
  return step;
}
