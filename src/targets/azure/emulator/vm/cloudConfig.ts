import { posix } from "node:path";
import { gunzipSync } from "node:zlib";
import { parseDocument } from "yaml";
import type { ScalarTag, Tags } from "yaml";
import { z } from "zod";

/**
 * The cloud-config an emulated VM boots with, read as Ubuntu 24.04's cloud-init reads it (pure:
 * base64 text in, typed config out). The result says what each emulated module must do; what
 * cloud-init would do that the emulator does not is listed, never silently dropped.
 *
 * Semantics follow cloud-init's sources (canonical/cloud-init 24.x: cc_ssh, cc_write_files,
 * cc_users_groups, cc_runcmd, cc_bootcmd, cc_package_update_upgrade_install, util.shellify):
 * - YAML 1.1, as PyYAML reads it: `permissions: 0644` is octal, `yes`/`on` are booleans;
 * - `ssh_keys` present → those keys are written and `ssh_genkeytypes` is ignored;
 * - a list item of runcmd/bootcmd is single-quoted into the script, a string goes in verbatim.
 */

export class CloudConfigError extends Error {
  constructor(vmName: string, detail: string) {
    super(`customData of VM ${vmName}: ${detail}`);
    this.name = "CloudConfigError";
  }
}

export const HOST_KEY_TYPES = ["rsa", "ecdsa", "ed25519"] as const;
export type HostKeyType = (typeof HOST_KEY_TYPES)[number];
export const DEFAULT_GENKEYTYPES: readonly HostKeyType[] = HOST_KEY_TYPES;

/** A runcmd/bootcmd entry: a string is shell text; a list is one command, each word quoted. */
export type ShellEntry = string | string[];

export interface WriteFile {
  /** Absolute and normalised, as cloud-init's os.path.abspath makes it. */
  path: string;
  /** Decoded content, base64-encoded for transport. */
  contentBase64: string;
  mode: number;
  /** `owner` split as cloud-init's extract_usergroup splits it; null = leave as created (root). */
  user: string | null;
  group: string | null;
  append: boolean;
  /** Written in the final stage, after users exist (cloud-init's write_files_deferred). */
  defer: boolean;
}

export interface UserConfig {
  name: string;
  gecos?: string;
  groups: string[];
  shell?: string;
  homedir?: string;
  primaryGroup?: string;
  uid?: string;
  system: boolean;
  noCreateHome: boolean;
  noUserGroup: boolean;
  lockPasswd: boolean;
  /** sudoers rules, each written as "<user> <rule>"; null: none. */
  sudo: string[] | null;
  sshAuthorizedKeys: string[];
}

/** `default` stands for the image's default user: on Azure, osProfile's admin user. */
export type UserEntry = { kind: "default" } | ({ kind: "user" } & UserConfig);

export interface PackageRef {
  name: string;
  version?: string;
  /** `apt` for plain names (Ubuntu tries apt first), `snap` for a `snap:` list. */
  manager: "apt" | "snap";
}

export interface HostKeyFile {
  type: HostKeyType;
  part: "private" | "public" | "certificate";
  value: string;
}

export interface CloudConfig {
  hostname?: string;
  fqdn?: string;
  preserveHostname: boolean;
  users: UserEntry[];
  groups: { name: string; members: string[] }[];
  ssh: {
    deleteKeys: boolean;
    /** Only used when `keys` is undefined (cloud-init's cc_ssh). */
    genKeyTypes: string[];
    keys?: HostKeyFile[];
    /** ssh_pwauth: true/false, or undefined to leave sshd's setting alone. */
    pwauth?: boolean;
    disableRoot: boolean;
    disableRootOpts: string;
    allowPublicKeys: boolean;
    authorizedKeys: string[];
  };
  writeFiles: WriteFile[];
  packages: PackageRef[];
  bootcmd?: ShellEntry[];
  runcmd?: ShellEntry[];
  finalMessage?: string;
  /** Top-level keys cloud-init would act on and the emulator does not. */
  notEmulated: string[];
  /** Keys whose only effect is on the serial console, which an emulated VM does not have. */
  consoleOnly: string[];
  /** What cloud-init itself would log as a WARNING while applying this config. */
  warnings: string[];
}

/** cloud-init's default for disable_root_opts (ssh_util.DISABLE_USER_OPTS). */
export const DISABLE_ROOT_OPTS =
  'no-port-forwarding,no-agent-forwarding,no-X11-forwarding,command="echo \'Please login as the user \\"$USER\\" rather than the user \\"$DISABLE_USER\\".\';echo;sleep 10;exit 142"';

/** Keys of which the emulator applies the effect cloud-init gives them. */
const EMULATED_KEYS = new Set([
  "hostname",
  "fqdn",
  "preserve_hostname",
  "users",
  "groups",
  "ssh_deletekeys",
  "ssh_genkeytypes",
  "ssh_keys",
  "ssh_pwauth",
  "disable_root",
  "disable_root_opts",
  "allow_public_ssh_keys",
  "ssh_authorized_keys",
  "write_files",
  "packages",
  "bootcmd",
  "runcmd",
  "final_message",
]);

/** Keys that only change what goes to the serial console (or a datasource Azure does not implement). */
const CONSOLE_ONLY_KEYS = new Set([
  "no_ssh_fingerprints",
  "ssh",
  "ssh_quiet_keygen",
  "ssh_fp_console_blacklist",
  "ssh_key_console_blacklist",
  "ssh_publish_hostkeys",
  "authkey_hash",
]);

// --- schemas: what cloud-config says, as YAML 1.1 gives it ------------------------------------

const scalar = z.union([z.string(), z.number(), z.boolean()]);
/** A YAML scalar as Python's str() prints it (cloud-init str()s list words: True, not true). */
const pyStr = (v: string | number | boolean) => (typeof v === "boolean" ? (v ? "True" : "False") : String(v));

const ShellListSchema = z.array(z.union([z.string(), z.array(scalar), z.null()]));

const StringList = z.union([z.string(), z.array(z.string())]);

const UserDictSchema = z
  .object({
    name: z.string().min(1),
    gecos: z.string().optional(),
    groups: z.union([z.string(), z.array(z.string()), z.null()]).optional(),
    shell: z.string().optional(),
    homedir: z.string().optional(),
    primary_group: z.string().optional(),
    uid: z.union([z.string(), z.number().int()]).optional(),
    system: z.boolean().optional(),
    no_create_home: z.boolean().optional(),
    no_user_group: z.boolean().optional(),
    lock_passwd: z.boolean().optional(),
    sudo: z.union([z.string(), z.array(z.string()), z.null(), z.literal(false)]).optional(),
    ssh_authorized_keys: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .catchall(z.unknown());

const WriteFileSchema = z
  .object({
    path: z.string().min(1),
    content: z.union([z.string(), z.instanceof(Uint8Array)]).nullish(),
    encoding: z.string().optional(),
    permissions: z.union([z.string(), z.number()]).optional(),
    owner: z.string().optional(),
    append: z.boolean().optional(),
    defer: z.boolean().optional(),
    source: z.unknown().optional(),
  })
  .catchall(z.unknown());

const PackageEntrySchema = z.union([
  z.string().min(1),
  z.array(z.string()).min(1).max(2),
  z.object({ apt: z.array(z.union([z.string(), z.array(z.string())])).optional(), snap: z.array(z.union([z.string(), z.array(z.string())])).optional() }).strict(),
]);

const CloudConfigSchema = z
  .object({
    hostname: z.string().min(1).optional(),
    fqdn: z.string().min(1).optional(),
    preserve_hostname: z.boolean().optional(),
    users: z.union([z.string(), z.array(z.union([z.string(), UserDictSchema]))]).optional(),
    groups: z.array(z.union([z.string(), z.record(z.string(), z.union([z.array(z.string()), z.string(), z.null()]))])).optional(),
    ssh_deletekeys: z.boolean().optional(),
    ssh_genkeytypes: z.array(z.string()).nullable().optional(),
    ssh_keys: z.record(z.string(), z.string()).optional(),
    ssh_pwauth: z.union([z.boolean(), z.literal("unchanged")]).optional(),
    disable_root: z.boolean().optional(),
    disable_root_opts: z.string().optional(),
    allow_public_ssh_keys: z.boolean().optional(),
    ssh_authorized_keys: z.array(z.string()).optional(),
    write_files: z.array(WriteFileSchema).optional(),
    packages: z.array(PackageEntrySchema).optional(),
    bootcmd: ShellListSchema.optional(),
    runcmd: ShellListSchema.optional(),
    final_message: z.string().optional(),
  })
  .catchall(z.unknown());

type RawCloudConfig = z.infer<typeof CloudConfigSchema>;

// --- decoding ----------------------------------------------------------------------------------

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** customData (base64) → the user-data text cloud-init would see (gzip undone, as cloud-init does). */
export function decodeCustomData(vmName: string, customData: string): string {
  const compact = customData.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw new CloudConfigError(vmName, "is not base64 (osProfile.customData must be base64-encoded)");
  }
  let bytes = Buffer.from(compact, "base64");
  if (bytes.subarray(0, 2).equals(GZIP_MAGIC)) {
    try {
      bytes = gunzipSync(bytes);
    } catch (e) {
      throw new CloudConfigError(vmName, `starts like gzip but does not decompress: ${(e as Error).message}`);
    }
  }
  return bytes.toString("utf8");
}

/**
 * PyYAML's booleans are YAML 1.1's without the single letters: `y` and `n` stay strings there
 * (cloud-init reads with PyYAML), while the yaml package's 1.1 schema makes them booleans.
 */
const PY_TRUE = /^(?:[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/;
const PY_FALSE = /^(?:[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/;
const pyYamlBooleans = (tags: Tags): Tags =>
  tags.map((t) => {
    if (typeof t !== "object" || t.tag !== "tag:yaml.org,2002:bool" || !("test" in t) || !(t.test instanceof RegExp)) return t;
    return { ...t, test: t.test.test("yes") ? PY_TRUE : PY_FALSE } as ScalarTag;
  });

const describe = (text: string) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);

function issuePath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
}

/**
 * The cloud-config in `customData`, or the defaults cloud-init applies without user-data when
 * `customData` is absent. Throws a CloudConfigError naming the VM for anything that is not a
 * valid cloud-config document (a shell script, MIME multipart, a Jinja template, bad YAML, a key
 * of the wrong type).
 */
export function parseCustomData(vmName: string, customData: string | undefined): CloudConfig {
  if (customData === undefined || customData.trim() === "") return fromRaw(vmName, {});
  return parseCloudConfigText(vmName, decodeCustomData(vmName, customData));
}

/** The same from the decoded text. */
export function parseCloudConfigText(vmName: string, text: string): CloudConfig {
  const firstLine = text.replace(/^\uFEFF/, "").split("\n", 1)[0]!.trimEnd();
  if (firstLine !== "#cloud-config") {
    const kind = firstLine.startsWith("#!")
      ? "a shell script"
      : /^content-type:/i.test(firstLine) || /^mime-version:/i.test(firstLine)
        ? "MIME multipart user-data"
        : firstLine.startsWith("## template:")
          ? "a Jinja template"
          : `text starting with ${describe(firstLine)}`;
    throw new CloudConfigError(vmName, `is ${kind}, not a #cloud-config document (only cloud-config is emulated)`);
  }
  const doc = parseDocument(text, { version: "1.1", uniqueKeys: false, customTags: pyYamlBooleans });
  if (doc.errors.length > 0) {
    throw new CloudConfigError(vmName, `is not valid YAML: ${doc.errors[0]!.message.split("\n")[0]}`);
  }
  const value: unknown = doc.toJS({ maxAliasCount: 1000 });
  if (value === null || value === undefined) return fromRaw(vmName, {});
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new CloudConfigError(vmName, "cloud-config must be a YAML mapping at the top level");
  }
  return fromRaw(vmName, value as Record<string, unknown>);
}

function fromRaw(vmName: string, value: Record<string, unknown>): CloudConfig {
  const parsed = CloudConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CloudConfigError(vmName, `cloud-config key ${issuePath(issue.path) || "(top level)"}: ${issue.message}`);
  }
  const raw = parsed.data;
  const warnings: string[] = [];
  const notEmulated: string[] = [];
  const consoleOnly: string[] = [];
  for (const key of Object.keys(value)) {
    if (EMULATED_KEYS.has(key)) continue;
    if (CONSOLE_ONLY_KEYS.has(key)) consoleOnly.push(key);
    else notEmulated.push(key);
  }
  const users = usersOf(vmName, raw, notEmulated);
  return {
    ...(raw.hostname !== undefined ? { hostname: raw.hostname } : {}),
    ...(raw.fqdn !== undefined ? { fqdn: raw.fqdn } : {}),
    preserveHostname: raw.preserve_hostname ?? false,
    users,
    groups: groupsOf(raw),
    ssh: sshOf(raw, warnings),
    writeFiles: (raw.write_files ?? []).flatMap((f, i) => writeFileOf(vmName, f, i, warnings, notEmulated)),
    packages: packagesOf(raw),
    ...(raw.bootcmd !== undefined ? { bootcmd: shellEntries(raw.bootcmd) } : {}),
    ...(raw.runcmd !== undefined ? { runcmd: shellEntries(raw.runcmd) } : {}),
    ...(raw.final_message !== undefined ? { finalMessage: raw.final_message } : {}),
    notEmulated,
    consoleOnly,
    warnings,
  };
}

function shellEntries(list: z.infer<typeof ShellListSchema>): ShellEntry[] {
  // YAML comments inside the list parse as null: cloud-init's shellify skips them.
  return list.filter((e) => e !== null).map((e) => (typeof e === "string" ? e : e.map(pyStr)));
}

const listOf = (v: string | string[] | null | undefined): string[] =>
  v === undefined || v === null ? [] : (typeof v === "string" ? v.split(",") : v).map((s) => s.trim()).filter((s) => s !== "");

function usersOf(vmName: string, raw: RawCloudConfig, notEmulated: string[]): UserEntry[] {
  if (raw.users === undefined) return [{ kind: "default" }];
  const entries = typeof raw.users === "string" ? listOf(raw.users) : raw.users;
  const out: UserEntry[] = [];
  entries.forEach((entry, i) => {
    if (typeof entry === "string") {
      if (entry === "default") out.push({ kind: "default" });
      else out.push({ kind: "user", ...userConfig({ name: entry }) });
      return;
    }
    if (entry.name === "default") {
      throw new CloudConfigError(vmName, `cloud-config key users[${i}]: write the default user as the string "default"`);
    }
    const known = new Set(Object.keys(UserDictSchema.shape));
    for (const key of Object.keys(entry)) if (!known.has(key)) notEmulated.push(`users[${i}].${key}`);
    out.push({ kind: "user", ...userConfig(entry) });
  });
  return out;
}

function userConfig(u: Partial<z.infer<typeof UserDictSchema>> & { name: string }): UserConfig {
  const sudo = u.sudo === undefined || u.sudo === null || u.sudo === false ? null : typeof u.sudo === "string" ? [u.sudo] : u.sudo;
  return {
    name: u.name,
    ...(u.gecos !== undefined ? { gecos: u.gecos } : {}),
    groups: listOf(u.groups),
    ...(u.shell !== undefined ? { shell: u.shell } : {}),
    ...(u.homedir !== undefined ? { homedir: u.homedir } : {}),
    ...(u.primary_group !== undefined ? { primaryGroup: u.primary_group } : {}),
    ...(u.uid !== undefined ? { uid: String(u.uid) } : {}),
    system: u.system ?? false,
    noCreateHome: u.no_create_home ?? false,
    noUserGroup: u.no_user_group ?? false,
    lockPasswd: u.lock_passwd ?? true,
    sudo,
    sshAuthorizedKeys: u.ssh_authorized_keys === undefined ? [] : typeof u.ssh_authorized_keys === "string" ? [u.ssh_authorized_keys] : u.ssh_authorized_keys,
  };
}

function groupsOf(raw: RawCloudConfig): { name: string; members: string[] }[] {
  return (raw.groups ?? []).flatMap((g) =>
    typeof g === "string" ? [{ name: g.trim(), members: [] }] : Object.entries(g).map(([name, members]) => ({ name, members: listOf(members) })),
  );
}

function sshOf(raw: RawCloudConfig, warnings: string[]): CloudConfig["ssh"] {
  let keys: HostKeyFile[] | undefined;
  if (raw.ssh_keys !== undefined) {
    keys = [];
    for (const [key, value] of Object.entries(raw.ssh_keys)) {
      const m = /^(rsa|ecdsa|ed25519)_(private|public|certificate)$/.exec(key);
      if (!m) {
        const reason = /^(ecdsa-sk|ed25519-sk)_(private|public|certificate)$/.test(key) ? "unsupported" : "unrecognized";
        warnings.push(`Skipping ${reason} ssh_keys entry: "${key}"`);
        continue;
      }
      keys.push({ type: m[1] as HostKeyType, part: m[2] as HostKeyFile["part"], value });
    }
  }
  return {
    deleteKeys: raw.ssh_deletekeys ?? true,
    genKeyTypes: raw.ssh_genkeytypes === undefined || raw.ssh_genkeytypes === null ? [...DEFAULT_GENKEYTYPES] : raw.ssh_genkeytypes,
    ...(keys !== undefined ? { keys } : {}),
    ...(typeof raw.ssh_pwauth === "boolean" ? { pwauth: raw.ssh_pwauth } : {}),
    disableRoot: raw.disable_root ?? true,
    disableRootOpts: raw.disable_root_opts ?? DISABLE_ROOT_OPTS,
    allowPublicKeys: raw.allow_public_ssh_keys ?? true,
    authorizedKeys: raw.ssh_authorized_keys ?? [],
  };
}

/** cloud-init's decode_perms: an int as is, a string as octal, anything else the default (with a warning). */
function permissionsOf(p: string | number | undefined, warnings: string[]): number {
  if (p === undefined) return 0o644;
  if (typeof p === "number") return Math.trunc(p);
  if (/^\s*(0o)?[0-7]+\s*$/i.test(p)) return parseInt(p.trim().replace(/^0o/i, ""), 8);
  warnings.push(`Undecodable permissions ${p}, returning default 644`);
  return 0o644;
}

function writeFileOf(vmName: string, f: z.infer<typeof WriteFileSchema>, i: number, warnings: string[], notEmulated: string[]): WriteFile[] {
  const known = new Set(Object.keys(WriteFileSchema.shape));
  for (const key of Object.keys(f)) if (!known.has(key)) notEmulated.push(`write_files[${i}].${key}`);
  if (f.source !== undefined) {
    // cloud-init falls back to `content` when the URL cannot be read; the emulator reads no URL.
    notEmulated.push(`write_files[${i}].source`);
    warnings.push(`Failed to retrieve contents from source of write_files[${i}] (not emulated); falling back to data from "contents" key`);
  }
  const encoding = (f.encoding ?? "").toLowerCase().trim();
  let bytes: Buffer;
  const content = f.content ?? "";
  try {
    bytes = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
    if (["gz+base64", "gzip+base64", "gz+b64", "gzip+b64", "b64", "base64"].includes(encoding)) {
      bytes = Buffer.from(bytes.toString("latin1").replace(/\s+/g, ""), "base64");
    }
    if (["gz", "gzip", "gz+base64", "gzip+base64", "gz+b64", "gzip+b64"].includes(encoding)) bytes = gunzipSync(bytes);
  } catch (e) {
    throw new CloudConfigError(vmName, `cloud-config key write_files[${i}].content does not decode as ${encoding}: ${(e as Error).message}`);
  }
  if (encoding !== "" && !["gz", "gzip", "gz+base64", "gzip+base64", "gz+b64", "gzip+b64", "b64", "base64", "text/plain"].includes(encoding)) {
    warnings.push(`Unknown encoding type ${encoding}, assuming text/plain`);
  }
  const [userPart, groupPart] = (f.owner ?? "root:root").split(":", 2).map((s) => s.trim());
  const none = (s: string | undefined) => s === undefined || s === "" || s === "-1" || s.toLowerCase() === "none";
  return [
    {
      path: posix.resolve("/", f.path),
      contentBase64: bytes.toString("base64"),
      mode: permissionsOf(f.permissions, warnings),
      user: none(userPart) ? null : userPart!,
      group: none(groupPart) ? null : groupPart!,
      append: f.append ?? false,
      defer: f.defer ?? false,
    },
  ];
}

function packageRef(entry: string | string[], manager: PackageRef["manager"]): PackageRef {
  if (Array.isArray(entry)) return { name: entry[0]!, ...(entry[1] !== undefined ? { version: entry[1] } : {}), manager };
  const eq = entry.indexOf("=");
  return eq > 0 ? { name: entry.slice(0, eq), version: entry.slice(eq + 1), manager } : { name: entry, manager };
}

function packagesOf(raw: RawCloudConfig): PackageRef[] {
  return (raw.packages ?? []).flatMap((p): PackageRef[] => {
    if (typeof p === "string" || Array.isArray(p)) return [packageRef(p, "apt")];
    return [...(p.apt ?? []).map((e) => packageRef(e, "apt")), ...(p.snap ?? []).map((e) => packageRef(e, "snap"))];
  });
}
