export { createSsoProvider, deleteSsoProvider, getSsoProvider, listSsoProviders, updateSsoProvider } from "./providers.ts";
export { completeSsoLogin, SSO_COOKIE, SSO_LOGIN_TTL_S, startSsoLogin } from "./sign-in.ts";
