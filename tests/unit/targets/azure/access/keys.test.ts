import { createPublicKey, generateKeyPairSync, verify } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildPlan, defineExperiment } from "../../../../../src/index.ts";
import {
  ed25519PrivateKeyToOpenSsh,
  generateClientKey,
  generateHostKey,
  generateRunKeys,
  removeRunKeys,
  sshMpint,
  toOpenSshPublicLine,
} from "../../../../../src/targets/azure/access/keys.ts";

// ssh2 is what node-ssh (the runner's SSH client) parses keys with.
interface ParsedKey {
  type: string;
  getPublicSSH(): Buffer;
  isPrivateKey(): boolean;
  sign(data: Buffer): Buffer;
}
const ssh2 = createRequire(import.meta.url)("ssh2") as { utils: { parseKey(data: string | Buffer): ParsedKey | Error } };
const parse = (text: string): ParsedKey => {
  const k = ssh2.utils.parseKey(text);
  if (k instanceof Error) throw k;
  return k;
};
const hasSshKeygen = (() => {
  try {
    execFileSync("ssh-keygen", ["-?"], { stdio: "ignore" });
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ENOENT";
  }
})();

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "latlab-keys-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("OpenSSH public key lines", () => {
  it("an RSA key's line parses as ssh-rsa and carries the same key", () => {
    const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 3072 });
    const line = toOpenSshPublicLine(publicKey);
    expect(line).toMatch(/^ssh-rsa AAAAB3NzaC1yc2EA[A-Za-z0-9+/=]+$/);
    const parsed = parse(line);
    expect(parsed.type).toBe("ssh-rsa");
    expect(parsed.getPublicSSH().toString("base64")).toBe(line.split(" ")[1]);
  });

  it("an ed25519 key's line parses as ssh-ed25519 (51 bytes of blob)", () => {
    const { publicKey } = generateKeyPairSync("ed25519");
    const line = toOpenSshPublicLine(publicKey);
    expect(line).toMatch(/^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI[A-Za-z0-9+/]+$/);
    expect(Buffer.from(line.split(" ")[1]!, "base64")).toHaveLength(4 + 11 + 4 + 32);
    expect(parse(line).type).toBe("ssh-ed25519");
  });

  it.skipIf(!hasSshKeygen)("ssh-keygen reads the lines: 3072-bit RSA, 256-bit ED25519", () => {
    const dir = tempDir();
    const rsa = join(dir, "rsa.pub");
    const ed = join(dir, "ed.pub");
    writeFileSync(rsa, `${generateClientKey().publicKey} test\n`);
    writeFileSync(ed, `${generateHostKey().publicKey} test\n`);
    expect(execFileSync("ssh-keygen", ["-l", "-f", rsa], { encoding: "utf8" })).toMatch(/^3072 SHA256:\S+ test \(RSA\)/);
    expect(execFileSync("ssh-keygen", ["-l", "-f", ed], { encoding: "utf8" })).toMatch(/^256 SHA256:\S+ test \(ED25519\)/);
  });

  it("mpint: strips leading zeros, pads a set top bit", () => {
    expect(sshMpint(Buffer.from([0, 0, 0x7f]))).toEqual(Buffer.from([0, 0, 0, 1, 0x7f]));
    expect(sshMpint(Buffer.from([0x80, 1]))).toEqual(Buffer.from([0, 0, 0, 3, 0, 0x80, 1]));
    expect(sshMpint(Buffer.from([1, 0, 1]))).toEqual(Buffer.from([0, 0, 0, 3, 1, 0, 1]));
  });
});

describe("private keys", () => {
  it("the client key is ≥3072-bit RSA, PKCS#1 PEM that ssh2 (node-ssh) reads, matching its public line", () => {
    const k = generateClientKey();
    expect(k.privateKey).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
    expect(createPublicKey(k.privateKey).asymmetricKeyDetails?.modulusLength).toBe(3072);
    const parsed = parse(k.privateKey);
    expect(parsed.isPrivateKey()).toBe(true);
    expect(`ssh-rsa ${parsed.getPublicSSH().toString("base64")}`).toBe(k.publicKey);
    expect(() => generateClientKey(2048)).toThrow(/at least 3072/);
  });

  it("a host key is an OpenSSH-format ed25519 private key whose signatures verify against its public line", () => {
    const k = generateHostKey("host");
    expect(k.privateKey).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n[\s\S]+\n-----END OPENSSH PRIVATE KEY-----\n$/);
    const parsed = parse(k.privateKey);
    expect(parsed.type).toBe("ssh-ed25519");
    expect(parsed.isPrivateKey()).toBe(true);
    expect(`ssh-ed25519 ${parsed.getPublicSSH().toString("base64")}`).toBe(k.publicKey);
    // The private half really is the key: sign with the parsed OpenSSH key, verify with the public line's raw key.
    const raw = Buffer.from(k.publicKey.split(" ")[1]!, "base64").subarray(19);
    const pub = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
    const data = Buffer.from("latlab");
    expect(verify(null, data, pub, parsed.sign(data))).toBe(true);
  });

  it("the OpenSSH private format is deterministic given the check int (8-byte padded)", () => {
    const { privateKey } = generateKeyPairSync("ed25519");
    const a = ed25519PrivateKeyToOpenSsh(privateKey, "c", 42);
    expect(ed25519PrivateKeyToOpenSsh(privateKey, "c", 42)).toBe(a);
    const body = Buffer.from(a.split("\n").slice(1, -2).join(""), "base64");
    expect(body.subarray(0, 15).toString("latin1")).toBe("openssh-key-v1\0");
    expect(() => ed25519PrivateKeyToOpenSsh(generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey)).toThrow(/ed25519/);
  });

  it.skipIf(!hasSshKeygen)("ssh-keygen -y derives the same public line from a host private key", () => {
    const k = generateHostKey();
    const file = join(tempDir(), "host");
    writeFileSync(file, k.privateKey, { mode: 0o600 });
    expect(execFileSync("ssh-keygen", ["-y", "-f", file], { encoding: "utf8" }).trim().split(" ").slice(0, 2).join(" ")).toBe(k.publicKey);
  });
});

describe("generateRunKeys", () => {
  const plan = buildPlan(
    defineExperiment({
      name: "keys",
      description: "x",
      defaults: { region: "uksouth" },
      axes: { accelnet: [false, true] },
      hosts: { client: {}, server: {} },
      measure: [{ tool: "ping" }],
    }),
  );

  it("writes a client key and one host key per planned host, 0600 in a 0700 folder, and removes them", async () => {
    const dir = join(tempDir(), "state");
    const keys = await generateRunKeys(plan, dir);
    expect(Object.keys(keys.hosts).sort()).toEqual(["d0-client", "d0-server", "d1-client", "d1-server"]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(keys.files).toHaveLength(2 + 4 * 2);
    for (const f of keys.files) expect(statSync(f).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, "client_rsa"), "utf8")).toBe(keys.client.privateKey);
    expect(readFileSync(join(dir, "hostkeys", "d1-server_ed25519.pub"), "utf8").trim()).toBe(keys.hosts["d1-server"]!.publicKey);
    const hostPublics = new Set(Object.values(keys.hosts).map((k) => k.publicKey));
    expect(hostPublics.size).toBe(4);

    const removed = await removeRunKeys(dir);
    expect(removed.length).toBeGreaterThan(0);
    expect(existsSync(join(dir, "client_rsa"))).toBe(false);
    expect(existsSync(join(dir, "hostkeys"))).toBe(false);
  });
});
