/**
 * Runs every pending migration. Kysely's Migrator takes a database lock, so
 * several instances starting together on one PostgreSQL are safe.
 *
 * Migrations are listed explicitly (not read from the folder) so they load the
 * same way under tsx, vitest and a bundler. Add a migration: create
 * migrations/<yyyymmdd>-<nnn>-<what>.ts exporting up(db: Kysely<unknown>) and
 * add it below; a test fails when a file in the folder is not listed.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Kysely, Migration, MigrationResult } from "kysely";
import { Migrator } from "kysely";
import * as identity from "./migrations/20251122-001-identity.ts";
import * as network from "./migrations/20251123-001-network.ts";
import * as vrrpMemberState from "./migrations/20251123-301-vrrp-member-state.ts";
import * as gateway from "./migrations/20251123-401-gateway.ts";
import * as notifyAndSealedConfigs from "./migrations/20251124-501-notify-and-sealed-configs.ts";
import * as liveStateFillfactor from "./migrations/20251124-801-live-state-fillfactor.ts";
import * as deviceIdentity from "./migrations/20261125-101-device-identity.ts";
import * as accounts from "./migrations/20261125-201-accounts.ts";
import * as mfaSso from "./migrations/20261125-301-mfa-sso.ts";
import * as lanOverlapIndex from "./migrations/20261125-601-lan-overlap-index.ts";
import * as consoleLive from "./migrations/20261125-701-console.ts";
import * as listIndexes from "./migrations/20261125-801-list-indexes.ts";
import * as lossCounts from "./migrations/20261125-951-loss-counts.ts";
import * as remoteVpn from "./migrations/20261125-961-remote-vpn.ts";
import * as signupDumps from "./migrations/20261125-963-signup-dumps.ts";
import * as healing from "./migrations/20261125-964-healing.ts";
import * as deviceTagsActions from "./migrations/20261126-101-device-tags-actions.ts";
import * as deviceDiagnostics from "./migrations/20261126-201-device-diagnostics.ts";
import * as statistics from "./migrations/20261126-301-statistics.ts";
import * as agentUpgrades from "./migrations/20261126-401-agent-upgrades.ts";
import * as upgradeJobs from "./migrations/20261126-402-upgrade-jobs.ts";
import * as fanout from "./migrations/20261126-701-fanout.ts";
import * as jobLiveEvents from "./migrations/20261126-702-job-live-events.ts";
import * as devicesFillfactor from "./migrations/20261126-801-devices-fillfactor.ts";
import * as jobsGroupColumn from "./migrations/20261202-101-jobs-group-column.ts";
import * as authNotifyTxid from "./migrations/20261202-201-auth-notify-txid.ts";
import * as notifyContext from "./migrations/20261202-301-notify-context.ts";
import * as liveEventsPerStatement from "./migrations/20261205-101-live-events-per-statement.ts";
import * as deviceInterfaceSummary from "./migrations/20261205-201-device-interface-summary.ts";
import * as rowCounts from "./migrations/20261205-301-row-counts.ts";
import * as auditJson from "./migrations/20261206-101-audit-json.ts";
import * as listVersions from "./migrations/20261206-201-list-versions.ts";
import * as notificationsDeviceIndex from "./migrations/20261207-101-notifications-device-index.ts";
import * as sampleBrinAutosummarize from "./migrations/20261207-201-sample-brin-autosummarize.ts";
import * as samplePartitions from "./migrations/20261207-301-sample-partitions.ts";
import * as deviceDisconnects from "./migrations/20261207-401-device-disconnects.ts";
import * as tunnelStatus from "./migrations/20261207-501-tunnel-status.ts";

export const MIGRATIONS: Record<string, Migration> = {
  "20251122-001-identity": identity,
  "20251123-001-network": network,
  "20251123-301-vrrp-member-state": vrrpMemberState,
  "20251123-401-gateway": gateway,
  "20251124-501-notify-and-sealed-configs": notifyAndSealedConfigs,
  "20251124-801-live-state-fillfactor": liveStateFillfactor,
  "20261125-201-accounts": accounts,
  "20261125-301-mfa-sso": mfaSso,
  "20261125-101-device-identity": deviceIdentity,
  "20261125-701-console": consoleLive,
  "20261125-601-lan-overlap-index": lanOverlapIndex,
  "20261125-801-list-indexes": listIndexes,
  "20261125-951-loss-counts": lossCounts,
  "20261125-964-healing": healing,
  "20261125-963-signup-dumps": signupDumps,
  "20261125-961-remote-vpn": remoteVpn,
  "20261126-101-device-tags-actions": deviceTagsActions,
  "20261126-701-fanout": fanout,
  "20261126-702-job-live-events": jobLiveEvents,
  "20261126-801-devices-fillfactor": devicesFillfactor,
  "20261202-101-jobs-group-column": jobsGroupColumn,
  "20261202-201-auth-notify-txid": authNotifyTxid,
  "20261202-301-notify-context": notifyContext,
  "20261205-101-live-events-per-statement": liveEventsPerStatement,
  "20261205-201-device-interface-summary": deviceInterfaceSummary,
  "20261205-301-row-counts": rowCounts,
  "20261206-101-audit-json": auditJson,
  "20261206-201-list-versions": listVersions,
  "20261207-101-notifications-device-index": notificationsDeviceIndex,
  "20261207-201-sample-brin-autosummarize": sampleBrinAutosummarize,
  "20261207-301-sample-partitions": samplePartitions,
  "20261207-401-device-disconnects": deviceDisconnects,
  "20261207-501-tunnel-status": tunnelStatus,
  "20261126-401-agent-upgrades": agentUpgrades,
  "20261126-402-upgrade-jobs": upgradeJobs,
  "20261126-301-statistics": statistics,
  "20261126-201-device-diagnostics": deviceDiagnostics,
};

export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");

export async function migrateToLatest(db: Kysely<unknown>): Promise<MigrationResult[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    // Branches land migrations in any order; each stands on its own.
    allowUnorderedMigrations: true,
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((r) => r.status === "Error")?.migrationName;
    throw new Error(`database migration ${failed ?? ""} failed: ${(error as Error).message ?? error}`, { cause: error });
  }
  return results;
}
