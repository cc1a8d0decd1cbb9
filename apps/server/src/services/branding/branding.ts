/**
 * The installation's branding (one row): product name, accent colour and an
 * optional logo, shown by the console's header and sign-in page.
 */
import { type Branding, type BrandingUpdate, DEFAULT_BRANDING } from "@tern/protocol";
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import type { LogoType } from "./logo-file.ts";

export const LOGO_PATH = "/api/branding/logo";

export async function getBranding(db: Db): Promise<Branding> {
  const row = await db
    .selectFrom("branding")
    .select(["product_name", "accent_color", "logo_type", "logo_version"])
    .where("id", "=", 1)
    .executeTakeFirst();
  return {
    productName: row?.product_name ?? DEFAULT_BRANDING.productName,
    accentColor: row?.accent_color ?? DEFAULT_BRANDING.accentColor,
    logoUrl: row?.logo_type ? `${LOGO_PATH}?v=${row.logo_version}` : null,
  };
}

export async function updateBranding(db: Db, input: BrandingUpdate): Promise<Branding> {
  const values = {
    ...(input.productName !== undefined ? { product_name: input.productName } : {}),
    ...(input.accentColor !== undefined ? { accent_color: input.accentColor.toLowerCase() } : {}),
  };
  await db
    .insertInto("branding")
    .values({ id: 1, ...values })
    .onConflict((oc) => oc.column("id").doUpdateSet({ ...values, updated_at: sql`now()` }))
    .execute();
  return getBranding(db);
}

/** Stores a checked logo (or removes it with null); the version in its URL changes every time. */
export async function setLogo(db: Db, logo: { bytes: Buffer; type: LogoType } | null): Promise<Branding> {
  const values = { logo: logo?.bytes ?? null, logo_type: logo?.type ?? null };
  await db
    .insertInto("branding")
    .values({ id: 1, ...values, logo_version: 1 })
    .onConflict((oc) =>
      oc.column("id").doUpdateSet({ ...values, logo_version: sql`branding.logo_version + 1`, updated_at: sql`now()` }),
    )
    .execute();
  return getBranding(db);
}

export async function getLogo(db: Db): Promise<{ bytes: Buffer; type: string; version: number } | null> {
  const row = await db
    .selectFrom("branding")
    .select(["logo", "logo_type", "logo_version"])
    .where("id", "=", 1)
    .executeTakeFirst();
  if (!row?.logo || !row.logo_type) return null;
  return { bytes: Buffer.from(row.logo), type: row.logo_type, version: row.logo_version };
}
