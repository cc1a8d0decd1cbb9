/**
 * Password hashing with scrypt (memory-hard) from node:crypto. The stored
 * text carries its parameters, so the cost can be raised later without
 * invalidating existing hashes: `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

const KEY_LEN = 32;
const R = 8;
const P = 1;

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** logN;
  return new Promise((resolve, reject) => {
    // maxmem must exceed 128·N·r bytes or node refuses the parameters.
    scrypt(password.normalize("NFC"), salt, KEY_LEN, { N, r, p, maxmem: 256 * N * r }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** Hashes a password with cost 2^logN (runs on libuv's thread pool, not the event loop). */
export async function hashPassword(password: string, logN: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, logN, R, P);
  return ["scrypt", logN, R, P, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** True when the password matches the stored hash; false for any malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, logN, r, p, saltText, keyText] = stored.split("$");
  if (scheme !== "scrypt" || !saltText || !keyText) return false;
  const params = [Number(logN), Number(r), Number(p)];
  if (!params.every((n) => Number.isInteger(n) && n > 0) || params[0]! > 20) return false;
  const expected = Buffer.from(keyText, "base64url");
  const actual = await derive(password, Buffer.from(saltText, "base64url"), params[0]!, params[1]!, params[2]!);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash that matches no password, verified when the user does not exist so timing does not tell. */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(logN: number): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString("hex"), logN);
  return dummyHash;
}
