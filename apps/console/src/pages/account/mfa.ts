/** Two-factor helpers of the account page: how the secret and the recovery codes are shown and saved. */

/** The base32 secret in groups of four, as authenticator apps show it (spaces are ignored when typed in). */
export function groupSecret(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, "$1 ");
}

/** The text file of the recovery codes, saved by the user: what they are and how to use them. */
export function recoveryCodesText(codes: string[], account: string, product: string): string {
  return [
    `${product} recovery codes for ${account}`,
    "Each code signs in once without the authenticator app (type it where the sign-in asks for the code).",
    "",
    ...codes,
    "",
  ].join("\n");
}

/** A 6-digit code from an authenticator app (spaces allowed as typed from the app). */
export const totpCode = (text: string) => text.replace(/\s/g, "");
export const isTotpCode = (text: string) => /^\d{6}$/.test(totpCode(text));
