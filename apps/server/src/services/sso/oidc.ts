/**
 * The relying-party side of OpenID Connect through openid-client: discovery of
 * a provider's metadata (cached a few minutes per provider and version), and
 * the errors of talking to it mapped to the API's codes.
 */
import * as client from "openid-client";
import { ApiError } from "../../http/errors.ts";

const CACHE_MS = 10 * 60_000;
const TIMEOUT_S = 10;
const cache = new Map<string, { version: string; at: number; config: Promise<client.Configuration> }>();

export interface OidcTarget {
  id: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Changes whenever the provider's row does (updated_at). */
  version: string;
}

export const providerUnavailable = () =>
  new ApiError("SSO_PROVIDER_UNAVAILABLE", "the identity provider could not be reached or its answer was unusable");

/** The provider's configuration (discovery), from the cache when fresh. */
export function oidcConfig(target: OidcTarget): Promise<client.Configuration> {
  const hit = cache.get(target.id);
  if (hit && hit.version === target.version && Date.now() - hit.at < CACHE_MS) return hit.config;
  const config = client
    .discovery(new URL(target.issuer), target.clientId, target.clientSecret, undefined, {
      timeout: TIMEOUT_S,
      // Only reachable for http:// issuers, which the provider settings refuse unless TERN_SSO_ALLOW_HTTP_ISSUER.
      ...(target.issuer.startsWith("http://") ? { execute: [client.allowInsecureRequests] } : {}),
    })
    .catch((err: unknown) => {
      cache.delete(target.id);
      throw Object.assign(providerUnavailable(), { cause: err });
    });
  cache.set(target.id, { version: target.version, at: Date.now(), config });
  return config;
}

export function forgetOidcConfig(providerId: string): void {
  cache.delete(providerId);
}

/** An error of the code exchange or ID token checks → SSO_FAILED (the provider said no, or its answer did not verify) or SSO_PROVIDER_UNAVAILABLE. */
export function oidcError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (
    err instanceof client.AuthorizationResponseError ||
    err instanceof client.ResponseBodyError ||
    err instanceof client.WWWAuthenticateChallengeError ||
    (err instanceof client.ClientError && !/fetch|network|timeout|abort/i.test(`${err.message} ${String(err.cause ?? "")}`))
  ) {
    return new ApiError("SSO_FAILED", "the identity provider's answer was refused or did not verify");
  }
  return providerUnavailable();
}
