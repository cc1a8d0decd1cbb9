/**
 * A fresh PostgreSQL database for a lab's server, on the server CI starts
 * (TERN_TEST_DATABASE_URL), dropped afterwards. Without the variable the lab
 * uses the server's embedded database.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

export interface LabDatabase {
  url: string;
  drop(): Promise<void>;
}

async function onServer<T>(serverUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A new empty database when TERN_TEST_DATABASE_URL names a PostgreSQL server, else null. */
export async function labDatabase(env = process.env): Promise<LabDatabase | null> {
  const serverUrl = env.TERN_TEST_DATABASE_URL;
  if (!serverUrl) return null;
  const name = `tern_lab_${process.pid}_${randomBytes(4).toString("hex")}`;
  await onServer(serverUrl, (c) => c.query(`create database ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => onServer(serverUrl, (c) => c.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
}
