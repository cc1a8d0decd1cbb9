/** The web console's own API shapes: its browser session and the installation's branding. */
import * as z from "zod";
import { Id } from "./common.ts";
import { MfaLoginRequest } from "./mfa.ts";
import { LoginRequest, Role } from "./tenancy.ts";

/** `POST /console/session`: the body of `POST /users/login`, or (second step) the body of `POST /users/login/mfa`. */
export const ConsoleSignIn = z.union([z.strictObject(LoginRequest.shape), MfaLoginRequest]);
export type ConsoleSignIn = z.infer<typeof ConsoleSignIn>;

/** The signed-in console user, their organizations, and a CSRF token for unsafe requests (header X-CSRF-Token). */
export const ConsoleSession = z.strictObject({
  user: z.strictObject({ id: Id, email: z.string(), name: z.string().optional() }),
  organizations: z.array(z.strictObject({ id: Id, name: z.string(), role: Role })),
  defaultOrgId: Id.nullable(),
  csrfToken: z.string(),
});
export type ConsoleSession = z.infer<typeof ConsoleSession>;

/** "#rrggbb". */
export const AccentColor = z.string().regex(/^#[0-9a-fA-F]{6}$/, "must be a colour like #1a73e8");

/** `GET /branding`: what the console shows in its header and sign-in page. */
export const Branding = z.strictObject({
  productName: z.string(),
  accentColor: AccentColor,
  /** Versioned URL of the logo (changes when the logo does), null without one. */
  logoUrl: z.string().nullable(),
});
export type Branding = z.infer<typeof Branding>;

export const BrandingUpdate = z.strictObject({
  productName: z.string().trim().min(1).max(60).optional(),
  accentColor: AccentColor.optional(),
});
export type BrandingUpdate = z.infer<typeof BrandingUpdate>;

/** The default look of an installation without branding. */
export const DEFAULT_BRANDING = { productName: "Tern", accentColor: "#0b7285" } as const;
