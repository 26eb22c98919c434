import { createHash, createPrivateKey, generateKeyPairSync, hkdfSync } from "node:crypto";
import { ed25519PrivateKeyToOpenSsh, toOpenSshPublicLine, type SshKeyPair } from "./keys.ts";

/**
 * Host-key jobs of their own, with every OpenSSH encoding done by keys.ts:
 * - deterministic Ed25519 host keys from a secret seed (HKDF), for the Pulumi project entry
 *   (azureEntry.ts), so `pulumi up` twice does not replace every VM;
 * - a throwaway RSA public key for offline listings;
 * - reading public key lines back (key type, RSA modulus size) for validation.
 * Host keys are what cloud-init writes into /etc/ssh and what the runner pins; the private
 * halves are secrets: they go into the VM's customData (a Pulumi secret) and nowhere else.
 */

const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * The Ed25519 key pair for a 32-byte seed, in OpenSSH formats; the public line carries
 * `comment`. Deterministic: the check integers (which only detect a wrong passphrase) are
 * derived from the seed too.
 */
export function ed25519FromSeed(seed: Buffer, comment = ""): SshKeyPair {
  if (seed.length !== 32) throw new RangeError(`an Ed25519 seed is 32 bytes, got ${seed.length}`);
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
  const checkInt = createHash("sha256").update(seed).digest().readUInt32BE(0);
  return { privateKey: ed25519PrivateKeyToOpenSsh(key, comment, checkInt), publicKey: toOpenSshPublicLine(key, comment) };
}

/**
 * One Ed25519 host key per name, derived from a secret seed (HKDF-SHA256, info = name): the
 * same seed always gives the same keys, so a Pulumi project can keep one secret in its config
 * instead of a key per host, and `pulumi up` twice does not replace every VM.
 */
export function deriveHostKeys(secretSeed: string, names: readonly string[]): Record<string, SshKeyPair> {
  if (secretSeed.length < 32) throw new RangeError("the host key seed must be at least 32 characters (e.g. `openssl rand -hex 32`)");
  return Object.fromEntries(
    names.map((name) => [name, ed25519FromSeed(Buffer.from(hkdfSync("sha256", secretSeed, "latlab-host-key-v1", name, 32)), `latlab-host-${name}`)]),
  );
}

/** A throwaway RSA client key (public line only), for offline listings that need a valid-looking input. */
export function throwawayRsaPublicKey(bits = 2048): string {
  const { publicKey } = generateKeyPairSync("rsa", { modulusLength: bits });
  return toOpenSshPublicLine(publicKey, "latlab-offline-placeholder");
}

/** Reads the fields of an OpenSSH public key blob, or undefined when it is not one. */
function readBlob(line: string): { type: string; fields: Buffer[] } | undefined {
  const parts = line.trim().split(/\s+/);
  if (parts.length < 2 || !/^[A-Za-z0-9+/]+={0,2}$/.test(parts[1]!)) return undefined;
  const blob = Buffer.from(parts[1]!, "base64");
  const fields: Buffer[] = [];
  let off = 0;
  while (off < blob.length) {
    if (off + 4 > blob.length) return undefined;
    const len = blob.readUInt32BE(off);
    if (off + 4 + len > blob.length) return undefined;
    fields.push(blob.subarray(off + 4, off + 4 + len));
    off += 4 + len;
  }
  const type = fields[0]?.toString();
  if (!type || type !== parts[0]) return undefined;
  return { type, fields: fields.slice(1) };
}

/** The key type of an OpenSSH public key line ("ssh-ed25519", "ssh-rsa"…), checked against its blob. */
export function sshKeyType(line: string): string | undefined {
  return readBlob(line)?.type;
}

/** Modulus size in bits of an "ssh-rsa" public key line, or undefined when it is not one. */
export function rsaModulusBits(line: string): number | undefined {
  const parsed = readBlob(line);
  if (parsed?.type !== "ssh-rsa" || parsed.fields.length !== 2) return undefined;
  let n = parsed.fields[1]!;
  let i = 0;
  while (i < n.length && n[i] === 0) i++;
  n = n.subarray(i);
  if (!n.length) return 0;
  return (n.length - 1) * 8 + (32 - Math.clz32(n[0]!));
}
