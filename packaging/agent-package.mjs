#!/usr/bin/env node
/**
 * Agent upgrade packages (docs/upgrades.md), with node:crypto and the system's tar only:
 *
 *   node packaging/agent-package.mjs keygen --out <dir>
 *       an Ed25519 key pair: <dir>/agent-signing.key (PKCS#8 PEM, 0600: keep it offline) and
 *       <dir>/agent-signing.pub (the public key, 32 bytes base64: register it on the server and put it in
 *       the agents' `upgrade-keys` setting)
 *   node packaging/agent-package.mjs build --version <v> [--out <file>]
 *       bundles apps/agent for version <v> and packs what the Debian package puts under /usr/lib/tern-agent
 *       (bin/, dist/, package.json) plus manifest.json into tern-agent-<v>.tar.gz
 *   node packaging/agent-package.mjs sign --key <private key> <package>
 *       writes <package>.sig.json: version (from its manifest), sha256, signature and public key
 *   node packaging/agent-package.mjs upload --server <url> --token <token> [--org <id>] <package>
 *       POST /api/agent-packages with the signature file's fields as headers
 *
 * The functions are exported for tests and the lab scenario.
 */
import { execFileSync } from "node:child_process";
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The signed text; the same as @tern/protocol's agentPackageSigningText (a test checks they agree). */
export function signingText(version, sha256) {
  return `tern-agent-package\nversion=${version}\nsha256=${sha256}\n`;
}

/** The raw 32-byte public key of a key object, base64. */
export function publicKeyBase64(key) {
  return Buffer.from(createPublicKey(key).export({ format: "jwk" }).x, "base64url").toString("base64");
}

/** A new key pair: the private key as PKCS#8 PEM, the public key as 32 bytes base64. */
export function generateSigningKeys() {
  const { privateKey } = generateKeyPairSync("ed25519");
  return { privateKeyPem: privateKey.export({ format: "pem", type: "pkcs8" }), publicKey: publicKeyBase64(privateKey) };
}

/** The signature file's fields for package bytes of `version`. */
export function signPackageBytes(bytes, version, privateKeyPem) {
  const key = createPrivateKey(privateKeyPem);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const signature = sign(null, Buffer.from(signingText(version, sha256)), key).toString("base64");
  return { version, sha256, signature, publicKey: publicKeyBase64(key) };
}

/** The manifest.json inside a package file. */
export function readManifest(file) {
  return JSON.parse(execFileSync("tar", ["-xzOf", file, "./manifest.json"], { encoding: "utf8" }));
}

/**
 * Builds the package of version `version` from this repository's agent; returns its path. `bin` (optional)
 * replaces the launcher's text (tests make packages whose launcher fails).
 */
export async function buildPackage({ version, out, dist }) {
  const stage = await mkdtemp(path.join(tmpdir(), "tern-agent-package-"));
  try {
    const lib = path.join(stage, "pkg");
    await mkdir(path.join(lib, "bin"), { recursive: true });
    if (dist) await cp(dist, path.join(lib, "dist"), { recursive: true });
    else
      execFileSync(
        process.execPath,
        [
          path.join(repoRoot, "scripts", "bundle.mjs"),
          path.join(repoRoot, "apps", "agent"),
          "src/cli.ts",
          "--minify",
          "--outdir",
          path.join(lib, "dist"),
        ],
        { env: { ...process.env, TERN_PACKAGE_VERSION: version }, stdio: ["ignore", "ignore", "inherit"] },
      );
    await rm(path.join(lib, "dist", "meta.json"), { force: true });
    for (const f of ["tern-agent", "upgrade-launch.mjs"])
      await cp(path.join(repoRoot, "apps", "agent", "bin", f), path.join(lib, "bin", f));
    await writeFile(
      path.join(lib, "package.json"),
      `${JSON.stringify({ name: "tern-agent", version, private: true, type: "module" })}\n`,
    );
    await writeFile(
      path.join(lib, "manifest.json"),
      `${JSON.stringify({ name: "tern-agent", version, builtAt: new Date().toISOString() }, null, 2)}\n`,
    );
    const file = path.resolve(out ?? `tern-agent-${version}.tar.gz`);
    execFileSync("tar", ["--owner=0", "--group=0", "-czf", file, "-C", lib, "."]);
    return file;
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

async function main(argv) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      out: { type: "string" },
      version: { type: "string" },
      key: { type: "string" },
      server: { type: "string" },
      token: { type: "string" },
      org: { type: "string" },
    },
  });
  const [command, file] = positionals;
  switch (command) {
    case "keygen": {
      const dir = path.resolve(values.out ?? ".");
      const { privateKeyPem, publicKey } = generateSigningKeys();
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, "agent-signing.key"), privateKeyPem, { mode: 0o600, flag: "wx" });
      await writeFile(path.join(dir, "agent-signing.pub"), `${publicKey}\n`, { flag: "wx" });
      console.log(`private key ${path.join(dir, "agent-signing.key")} (keep it offline)\npublic key  ${publicKey}`);
      return 0;
    }
    case "build": {
      if (!values.version) throw new Error("build needs --version");
      console.log(await buildPackage({ version: values.version, out: values.out }));
      return 0;
    }
    case "sign": {
      if (!values.key || !file) throw new Error("sign needs --key <private key> <package>");
      const { version } = readManifest(file);
      const sig = signPackageBytes(await readFile(file), version, await readFile(values.key, "utf8"));
      await writeFile(`${file}.sig.json`, `${JSON.stringify(sig, null, 2)}\n`);
      console.log(`${file}.sig.json (version ${version}, sha256 ${sig.sha256})`);
      return 0;
    }
    case "upload": {
      if (!values.server || !values.token || !file) throw new Error("upload needs --server, --token and <package>");
      const sig = JSON.parse(await readFile(`${file}.sig.json`, "utf8"));
      const url = new URL("/api/agent-packages", values.server);
      if (values.org) url.searchParams.set("org", values.org);
      const res = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${values.token}`,
          "content-type": "application/octet-stream",
          "x-tern-package-version": sig.version,
          "x-tern-package-sha256": sig.sha256,
          "x-tern-package-signature": sig.signature,
          "x-tern-package-public-key": sig.publicKey,
        },
        body: await readFile(file),
      });
      console.log(await res.text());
      return res.ok ? 0 : 1;
    }
    default:
      console.error(
        "usage: agent-package.mjs keygen --out <dir> | build --version <v> [--out <file>] | sign --key <key> <package> | upload --server <url> --token <t> [--org <id>] <package>",
      );
      return 2;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`agent-package: ${err.message}`);
      process.exit(1);
    },
  );
}
