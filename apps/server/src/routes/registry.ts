/**
 * Every API route, registered explicitly in one place. Add a route: write
 * routes/<resource>/<operation>.ts exporting `route` (from defineRoute) and
 * `register(app)`, then add it to ROUTES. The security matrix test walks the
 * OpenAPI document, so a new route is covered without touching the test.
 */
import type { ApiApp } from "../http/env.ts";
import * as accessTokensCreate from "./accesstokens/create.ts";
import * as accessTokensDelete from "./accesstokens/delete.ts";
import * as accessTokensList from "./accesstokens/list.ts";
import * as accountsList from "./accounts/list.ts";
import * as accountsSignup from "./accounts/signup.ts";
import * as accountsSignupVerify from "./accounts/signup-verify.ts";
import * as accountsUpdate from "./accounts/update.ts";
import * as agentPackagesDelete from "./agentpackages/delete.ts";
import * as agentSigningKeysCreate from "./agentpackages/keys-create.ts";
import * as agentSigningKeysDelete from "./agentpackages/keys-delete.ts";
import * as agentSigningKeysList from "./agentpackages/keys-list.ts";
import * as agentPackagesList from "./agentpackages/list.ts";
import * as agentPackagesUpload from "./agentpackages/upload.ts";
import * as agentUpgradesCancel from "./agentupgrades/cancel.ts";
import * as agentUpgradesCreate from "./agentupgrades/create.ts";
import * as agentUpgradesGet from "./agentupgrades/get.ts";
import * as agentUpgradesList from "./agentupgrades/list.ts";
import * as agentUpgradesPause from "./agentupgrades/pause.ts";
import * as agentUpgradesResume from "./agentupgrades/resume.ts";
import * as agentVersionsList from "./agentupgrades/versions.ts";
import * as appstoreActionGet from "./appstore/action-get.ts";
import * as appstoreActionPost from "./appstore/action-post.ts";
import * as appstoreCatalog from "./appstore/catalog.ts";
import * as appstorePurchase from "./appstore/purchase.ts";
import * as appstorePurchasedDelete from "./appstore/purchased-delete.ts";
import * as appstorePurchasedGet from "./appstore/purchased-get.ts";
import * as appstorePurchasedList from "./appstore/purchased-list.ts";
import * as auditList from "./audit/list.ts";
import * as brandingGet from "./branding/get.ts";
import * as brandingLogoDelete from "./branding/logo-delete.ts";
import * as brandingLogoGet from "./branding/logo-get.ts";
import * as brandingLogoPut from "./branding/logo-put.ts";
import * as brandingUpdate from "./branding/update.ts";
import * as connectRegister from "./connect/register.ts";
import * as consoleSessionCreate from "./console/session-create.ts";
import * as consoleSessionDelete from "./console/session-delete.ts";
import * as consoleSessionGet from "./console/session-get.ts";
import * as devicesActionRun from "./devices/action-run.ts";
import * as devicesActionRunMany from "./devices/action-run-many.ts";
import * as devicesApproveMany from "./devices/approve-many.ts";
import * as devicesBgpStatus from "./devices/bgp-status.ts";
import * as devicesDelete from "./devices/delete.ts";
import * as devicesDeleteMany from "./devices/delete-many.ts";
import * as devicesDiagnosticsDns from "./devices/diagnostics-dns.ts";
import * as devicesDiagnosticsMany from "./devices/diagnostics-many.ts";
import * as devicesDiagnosticsPing from "./devices/diagnostics-ping.ts";
import * as devicesDiagnosticsTraceroute from "./devices/diagnostics-traceroute.ts";
import * as devicesDumpDownload from "./devices/dump-download.ts";
import * as devicesDumpRequest from "./devices/dump-request.ts";
import * as devicesDumpsList from "./devices/dumps-list.ts";
import * as devicesDumpsRequestMany from "./devices/dumps-request-many.ts";
import * as devicesGet from "./devices/get.ts";
import * as devicesIdentityReset from "./devices/identity-reset.ts";
import * as devicesInterfaceStatus from "./devices/interface-status.ts";
import * as devicesList from "./devices/list.ts";
import * as devicesLogs from "./devices/logs.ts";
import * as devicesStatistics from "./devices/statistics.ts";
import * as devicesTagsEdit from "./devices/tags-edit.ts";
import * as devicesTunnels from "./devices/tunnels.ts";
import * as devicesUpdate from "./devices/update.ts";
import * as eventsStream from "./events/stream.ts";
import * as healingActionsList from "./healing/list-actions.ts";
import * as invitationsAccept from "./invitations/accept.ts";
import * as invitationsCreate from "./invitations/create.ts";
import * as invitationsDelete from "./invitations/delete.ts";
import * as invitationsList from "./invitations/list.ts";
import * as jobsDelete from "./jobs/delete.ts";
import * as jobsDeleteMany from "./jobs/delete-many.ts";
import * as jobsGet from "./jobs/get.ts";
import * as jobsList from "./jobs/list.ts";
import * as membersDelete from "./members/delete.ts";
import * as membersList from "./members/list.ts";
import * as membersSessionsDelete from "./members/sessions-delete.ts";
import * as membersSessionsList from "./members/sessions-list.ts";
import * as membersUpdate from "./members/update.ts";
import * as mfaConfirm from "./mfa/confirm.ts";
import * as mfaDisable from "./mfa/disable.ts";
import * as mfaEnrol from "./mfa/enrol.ts";
import * as mfaLogin from "./mfa/login.ts";
import * as mfaRecoveryCodes from "./mfa/recovery-codes.ts";
import * as mfaStatus from "./mfa/status.ts";
import * as mlpoliciesCreate from "./mlpolicies/create.ts";
import * as mlpoliciesDelete from "./mlpolicies/delete.ts";
import * as mlpoliciesGet from "./mlpolicies/get.ts";
import * as mlpoliciesInstall from "./mlpolicies/install.ts";
import * as mlpoliciesList from "./mlpolicies/list.ts";
import * as mlpoliciesUninstall from "./mlpolicies/uninstall.ts";
import * as mlpoliciesUpdate from "./mlpolicies/update.ts";
import * as notificationsDelete from "./notifications/delete.ts";
import * as notificationsList from "./notifications/list.ts";
import * as notificationsUpdate from "./notifications/update.ts";
import * as notificationsConfDefaultGet from "./notificationsConf/default-get.ts";
import * as notificationsConfDefaultUpdate from "./notificationsConf/default-update.ts";
import * as notificationsConfEmailGet from "./notificationsConf/email-get.ts";
import * as notificationsConfEmailUpdate from "./notificationsConf/email-update.ts";
import * as notificationsConfGet from "./notificationsConf/get.ts";
import * as notificationsConfUpdate from "./notificationsConf/update.ts";
import * as notificationsConfWebhookGet from "./notificationsConf/webhook-get.ts";
import * as notificationsConfWebhookTest from "./notificationsConf/webhook-test.ts";
import * as notificationsConfWebhookUpdate from "./notificationsConf/webhook-update.ts";
import * as organizationsCreate from "./organizations/create.ts";
import * as organizationsDelete from "./organizations/delete.ts";
import * as organizationsGet from "./organizations/get.ts";
import * as organizationsHealingGet from "./organizations/healing-get.ts";
import * as organizationsHealingUpdate from "./organizations/healing-update.ts";
import * as organizationsList from "./organizations/list.ts";
import * as organizationsSecurityGet from "./organizations/security-get.ts";
import * as organizationsSecurityUpdate from "./organizations/security-update.ts";
import * as organizationsStatisticsTopTalkers from "./organizations/statistics-top-talkers.ts";
import * as organizationsStatisticsWorstTunnels from "./organizations/statistics-worst-tunnels.ts";
import * as organizationsUpdate from "./organizations/update.ts";
import * as organizationsUpdateCurrent from "./organizations/update-current.ts";
import * as pathlabelsCreate from "./pathlabels/create.ts";
import * as pathlabelsDelete from "./pathlabels/delete.ts";
import * as pathlabelsGet from "./pathlabels/get.ts";
import * as pathlabelsList from "./pathlabels/list.ts";
import * as pathlabelsUpdate from "./pathlabels/update.ts";
import * as peersCreate from "./peers/create.ts";
import * as peersDelete from "./peers/delete.ts";
import * as peersGet from "./peers/get.ts";
import * as peersList from "./peers/list.ts";
import * as peersPresets from "./peers/presets.ts";
import * as peersUpdate from "./peers/update.ts";
import * as ssoCallback from "./sso/callback.ts";
import * as ssoCreate from "./sso/create.ts";
import * as ssoDelete from "./sso/delete.ts";
import * as ssoGet from "./sso/get.ts";
import * as ssoList from "./sso/list.ts";
import * as ssoStart from "./sso/start.ts";
import * as ssoUpdate from "./sso/update.ts";
import * as health from "./system/health.ts";
import * as version from "./system/version.ts";
import * as tokensCreate from "./tokens/create.ts";
import * as tokensDelete from "./tokens/delete.ts";
import * as tokensList from "./tokens/list.ts";
import * as tunnelsCreate from "./tunnels/create.ts";
import * as tunnelsDelete from "./tunnels/delete.ts";
import * as tunnelsDeleteMany from "./tunnels/delete-many.ts";
import * as tunnelsGet from "./tunnels/get.ts";
import * as tunnelsList from "./tunnels/list.ts";
import * as tunnelsNotifications from "./tunnels/notifications.ts";
import * as tunnelsStats from "./tunnels/stats.ts";
import * as usersLogin from "./users/login.ts";
import * as usersLogout from "./users/logout.ts";
import * as usersPasswordChange from "./users/password-change.ts";
import * as usersPasswordResetConfirm from "./users/password-reset-confirm.ts";
import * as usersPasswordResetRequest from "./users/password-reset-request.ts";
import * as usersRefresh from "./users/refresh.ts";
import * as usersSessionsDelete from "./users/sessions-delete.ts";
import * as usersSessionsList from "./users/sessions-list.ts";
import * as vrrpCreate from "./vrrp/create.ts";
import * as vrrpDelete from "./vrrp/delete.ts";
import * as vrrpDeviceInterfaces from "./vrrp/device-interfaces.ts";
import * as vrrpGet from "./vrrp/get.ts";
import * as vrrpList from "./vrrp/list.ts";
import * as vrrpStatus from "./vrrp/status.ts";
import * as vrrpUpdate from "./vrrp/update.ts";

export interface RouteModule {
  register(app: ApiApp): void;
}

export const ROUTES: readonly RouteModule[] = [
  health,
  version,
  usersLogin,
  usersRefresh,
  usersLogout,
  // Account security: own password and sessions, password reset (services/accounts).
  usersPasswordChange,
  usersPasswordResetRequest,
  usersPasswordResetConfirm,
  usersSessionsList,
  usersSessionsDelete,
  // Two-factor sign-in: the second login step (public) and the user's own settings (auth "user").
  mfaLogin,
  mfaStatus,
  mfaEnrol,
  mfaConfirm,
  mfaDisable,
  mfaRecoveryCodes,
  // Single sign-on: identity providers (resource members), the public start and callback.
  ssoList,
  ssoCreate,
  ssoGet,
  ssoUpdate,
  ssoDelete,
  ssoStart,
  ssoCallback,
  consoleSessionCreate,
  consoleSessionGet,
  consoleSessionDelete,
  eventsStream,
  brandingGet,
  brandingUpdate,
  brandingLogoGet,
  brandingLogoPut,
  brandingLogoDelete,
  accountsList,
  accountsUpdate,
  // Self-service sign-up (shared SaaS option; services/accounts/signup.ts).
  accountsSignup,
  accountsSignupVerify,
  organizationsList,
  organizationsCreate,
  organizationsGet,
  organizationsUpdate,
  organizationsUpdateCurrent,
  organizationsDelete,
  organizationsSecurityGet,
  organizationsSecurityUpdate,
  organizationsHealingGet,
  organizationsStatisticsTopTalkers,
  organizationsStatisticsWorstTunnels,
  organizationsHealingUpdate,
  membersList,
  membersUpdate,
  membersDelete,
  membersSessionsList,
  membersSessionsDelete,
  invitationsList,
  invitationsCreate,
  invitationsAccept,
  invitationsDelete,
  accessTokensList,
  accessTokensCreate,
  accessTokensDelete,
  auditList,
  healingActionsList,
  // Tunnels: the static /tunnels/notifications before /tunnels/{id}.
  tunnelsList,
  tunnelsCreate,
  tunnelsDeleteMany,
  tunnelsNotifications,
  tunnelsGet,
  tunnelsStats,
  tunnelsDelete,
  peersList,
  peersCreate,
  // Before /peers/{id}, which would take "presets" for an id.
  peersPresets,
  peersGet,
  peersUpdate,
  peersDelete,
  tokensList,
  tokensCreate,
  tokensDelete,
  connectRegister,
  devicesList,
  devicesDeleteMany,
  devicesApproveMany,
  // Tags and remote actions (services/devices/tags, services/devices/actions); before /devices/{id}.
  devicesTagsEdit,
  devicesActionRunMany,
  devicesDiagnosticsMany,
  devicesDumpsRequestMany,
  devicesGet,
  devicesUpdate,
  devicesDelete,
  devicesIdentityReset,
  devicesTunnels,
  devicesInterfaceStatus,
  devicesBgpStatus,
  devicesStatistics,
  // Diagnostic dumps requested from a device (services/devices/dumps).
  devicesDumpRequest,
  devicesDumpsList,
  devicesDumpDownload,
  devicesActionRun,
  // Diagnostics run on the router, streamed (services/devices/diagnostics), and the agent's log.
  devicesDiagnosticsPing,
  devicesDiagnosticsTraceroute,
  devicesDiagnosticsDns,
  devicesLogs,
  jobsList,
  jobsDeleteMany,
  jobsGet,
  jobsDelete,
  // Notifications and their configuration (resources notifications, notificationsConf).
  notificationsList,
  notificationsUpdate,
  notificationsDelete,
  notificationsConfGet,
  notificationsConfUpdate,
  notificationsConfEmailGet,
  notificationsConfEmailUpdate,
  notificationsConfWebhookGet,
  notificationsConfWebhookUpdate,
  notificationsConfWebhookTest,
  notificationsConfDefaultGet,
  notificationsConfDefaultUpdate,
  // Path labels and multi-link policies.
  pathlabelsList,
  pathlabelsCreate,
  pathlabelsGet,
  pathlabelsUpdate,
  pathlabelsDelete,
  mlpoliciesList,
  mlpoliciesCreate,
  mlpoliciesGet,
  mlpoliciesUpdate,
  mlpoliciesDelete,
  mlpoliciesInstall,
  mlpoliciesUninstall,
  // VRRP: the fixed paths before /vrrp/{id}, which would otherwise take them.
  vrrpStatus,
  vrrpDeviceInterfaces,
  vrrpList,
  vrrpCreate,
  vrrpGet,
  vrrpUpdate,
  vrrpDelete,
  // App store (resource applications).
  appstoreCatalog,
  appstorePurchase,
  appstorePurchasedList,
  appstorePurchasedGet,
  appstorePurchasedDelete,
  appstoreActionGet,
  appstoreActionPost,
  // Staged agent upgrades (docs/upgrades.md): the account's signing keys and packages, the organization's rollouts.
  agentSigningKeysList,
  agentSigningKeysCreate,
  agentSigningKeysDelete,
  agentPackagesList,
  agentPackagesUpload,
  agentPackagesDelete,
  agentVersionsList,
  agentUpgradesList,
  agentUpgradesCreate,
  agentUpgradesGet,
  agentUpgradesPause,
  agentUpgradesResume,
  agentUpgradesCancel,
];

export function registerRoutes(app: ApiApp): void {
  for (const route of ROUTES) route.register(app);
}
