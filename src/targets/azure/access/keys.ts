import { generateKeyPairSync, randomBytes, type KeyObject } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Plan } from "../../../plan/types.ts";
import { hostName } from "../program/types.ts";

/**
 * SSH material of one Azure run, generated on the runner's machine:
 * - one RSA client key (Azure's safe choice for `linuxConfiguration.ssh.publicKeys`), whose
 *   private half stays on this machine;
 * - one ed25519 host key per VM, written onto the VM by cloud-init, so the runner can pin the
 *   host's identity before the first connection (no StrictHostKeyChecking=no, ever).
 * Private keys are written with mode 0600 into the run's state folder (runState.ts: outside the
 * results folder, which is shared), never into results.json, never printed.
 */

export const CLIENT_KEY_BITS = 3072;

export interface SshKeyPair {
  /** PEM (RSA: PKCS#1 "RSA PRIVATE KEY") or OpenSSH ("OPENSSH PRIVATE KEY") text. */
  privateKey: string;
  /** OpenSSH public key line, "type base64" with no comment. */
  publicKey: string;
}

// ---------------------------------------------------------------------------------------------
// Pure conversions (KeyObject → OpenSSH wire formats): latlab's only OpenSSH encoder
// (hostKeys.ts derives and checks keys, and encodes them through these).

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
/** SSH "string": uint32 length + bytes. */
const sshString = (data: Buffer | string) => {
  const b = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  return Buffer.concat([u32(b.length), b]);
};
/** SSH "mpint" of an unsigned big-endian magnitude: no leading zeros, a 0x00 pad when the top bit is set. */
export const sshMpint = (magnitude: Buffer) => {
  let i = 0;
  while (i < magnitude.length && magnitude[i] === 0) i++;
  let b = magnitude.subarray(i);
  if (b.length > 0 && (b[0]! & 0x80) !== 0) b = Buffer.concat([Buffer.from([0]), b]);
  return sshString(b);
};

const jwkField = (key: KeyObject, field: "n" | "e" | "x" | "d"): Buffer => {
  const jwk = key.export({ format: "jwk" }) as Record<string, unknown>;
  const value = jwk[field];
  if (typeof value !== "string") throw new Error(`key has no JWK field "${field}"`);
  return Buffer.from(value, "base64url");
};

/** The OpenSSH wire blob of an RSA or ed25519 public key (or the public half of a private key). */
export function publicKeyBlob(key: KeyObject): { type: string; blob: Buffer } {
  switch (key.asymmetricKeyType) {
    case "rsa":
      return { type: "ssh-rsa", blob: Buffer.concat([sshString("ssh-rsa"), sshMpint(jwkField(key, "e")), sshMpint(jwkField(key, "n"))]) };
    case "ed25519": {
      const x = jwkField(key, "x");
      if (x.length !== 32) throw new Error(`ed25519 public key of ${x.length} bytes`);
      return { type: "ssh-ed25519", blob: Buffer.concat([sshString("ssh-ed25519"), sshString(x)]) };
    }
    default:
      throw new Error(`unsupported key type for SSH: ${key.asymmetricKeyType ?? key.type}`);
  }
}

/** "ssh-rsa AAAA…" / "ssh-ed25519 AAAA…" of an RSA or ed25519 key, with `comment` appended when given. */
export function toOpenSshPublicLine(key: KeyObject, comment = ""): string {
  const { type, blob } = publicKeyBlob(key);
  return `${type} ${blob.toString("base64")}${comment ? ` ${comment}` : ""}`;
}

/**
 * An unencrypted ed25519 private key in OpenSSH's own format ("openssh-key-v1"), the one
 * sshd reads for HostKey files. `checkInt` is random by default; fixed for reproducible tests.
 */
export function ed25519PrivateKeyToOpenSsh(privateKey: KeyObject, comment = "", checkInt = randomBytes(4).readUInt32BE()): string {
  if (privateKey.type !== "private" || privateKey.asymmetricKeyType !== "ed25519") throw new Error("expected an ed25519 private key");
  const seed = jwkField(privateKey, "d");
  const pub = jwkField(privateKey, "x");
  const { blob } = publicKeyBlob(privateKey);
  let priv = Buffer.concat([
    u32(checkInt),
    u32(checkInt),
    sshString("ssh-ed25519"),
    sshString(pub),
    sshString(Buffer.concat([seed, pub])),
    sshString(comment),
  ]);
  const pad: number[] = [];
  for (let i = 1; (priv.length + pad.length) % 8 !== 0; i++) pad.push(i);
  priv = Buffer.concat([priv, Buffer.from(pad)]);
  const body = Buffer.concat([
    Buffer.from("openssh-key-v1\0", "latin1"),
    sshString("none"),
    sshString("none"),
    sshString(""),
    u32(1),
    sshString(blob),
    sshString(priv),
  ]).toString("base64");
  const lines = body.match(/.{1,70}/g) ?? [];
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join("\n")}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

// ---------------------------------------------------------------------------------------------
// Generation

/** RSA client key (≥3072 bits): private half as PKCS#1 PEM (read by OpenSSH and by ssh2/node-ssh). */
export function generateClientKey(bits = CLIENT_KEY_BITS): SshKeyPair {
  if (bits < 3072) throw new Error(`client key of ${bits} bits: latlab uses at least 3072`);
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: bits, publicExponent: 0x10001 });
  return {
    privateKey: privateKey.export({ format: "pem", type: "pkcs1" }).toString(),
    publicKey: toOpenSshPublicLine(privateKey),
  };
}

/** ed25519 host key: private half in OpenSSH format (what sshd's HostKey expects). */
export function generateHostKey(comment = ""): SshKeyPair {
  const { privateKey } = generateKeyPairSync("ed25519");
  return { privateKey: ed25519PrivateKeyToOpenSsh(privateKey, comment), publicKey: toOpenSshPublicLine(privateKey) };
}

export interface RunKeys {
  client: SshKeyPair;
  /** By host name (see hostName()): `d<deployment index>-<role>`. */
  hosts: Record<string, SshKeyPair>;
  /** Folder the keys live in (the run's state folder). */
  dir: string;
  /** Every file written, for cleanup. */
  files: string[];
}

export const CLIENT_KEY_FILE = "client_rsa";
export const HOST_KEYS_DIR = "hostkeys";

async function writeSecret(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600); // the mode option does not change an existing file's mode
}

/**
 * Generates the run's client key and one host key per planned host, and writes them (0600)
 * into `dir`, the run's state folder (0700). Returns the keys; nothing is logged.
 */
export async function generateRunKeys(plan: Plan, dir: string, options: { clientBits?: number } = {}): Promise<RunKeys> {
  await mkdir(join(dir, HOST_KEYS_DIR), { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  await chmod(join(dir, HOST_KEYS_DIR), 0o700);
  const files: string[] = [];
  const client = generateClientKey(options.clientBits);
  const clientPath = join(dir, CLIENT_KEY_FILE);
  await writeSecret(clientPath, client.privateKey);
  await writeSecret(`${clientPath}.pub`, `${client.publicKey} latlab-client\n`);
  files.push(clientPath, `${clientPath}.pub`);
  const hosts: Record<string, SshKeyPair> = {};
  for (const d of plan.deployments) {
    for (const h of d.hosts) {
      const name = hostName(d.index, h.role);
      const key = generateHostKey();
      hosts[name] = key;
      const path = join(dir, HOST_KEYS_DIR, `${name}_ed25519`);
      await writeSecret(path, key.privateKey);
      await writeSecret(`${path}.pub`, `${key.publicKey}\n`);
      files.push(path, `${path}.pub`);
    }
  }
  return { client, hosts, dir, files };
}

/** Removes the run's private keys from its state folder `dir` (after a successful teardown they open nothing). */
export async function removeRunKeys(dir: string): Promise<string[]> {
  const removed: string[] = [];
  for (const p of [join(dir, CLIENT_KEY_FILE), join(dir, `${CLIENT_KEY_FILE}.pub`), join(dir, HOST_KEYS_DIR), join(dir, "known_hosts")]) {
    if (!existsSync(p)) continue;
    await rm(p, { recursive: true, force: true });
    removed.push(p);
  }
  return removed;
}
