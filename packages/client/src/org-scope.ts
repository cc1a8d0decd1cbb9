/**
 * Which operations take the `org` query parameter (the organization to act
 * in). The few that do not are account-level or public; sending `org` to them
 * would be an unknown parameter. org-scope.test.ts checks this rule against
 * every operation of the OpenAPI document.
 */
const NO_ORG_PATHS = new Set([
  "/api/health",
  "/api/version",
  "/api/connect/register",
  "/api/accounts/{id}",
  "/api/organizations/{id}",
  "/api/organizations/{id}/security",
  "/api/organizations/{id}/healing",
  "/api/organizations/{id}/statistics/top-talkers",
  "/api/organizations/{id}/statistics/worst-tunnels",
  // Self-service sign-up: no organization exists yet.
  "/api/accounts/signup",
  "/api/accounts/signup/verify",
  "/api/invitations/accept",
  "/api/sso/callback",
  "/api/sso/providers/{id}/start",
  // The console's cookie session and the installation-wide branding.
  "/api/console/session",
  "/api/branding",
  "/api/branding/logo",
]);

export function takesOrg(schemaPath: string): boolean {
  if (schemaPath.startsWith("/api/users/")) return false;
  return !NO_ORG_PATHS.has(schemaPath);
}
