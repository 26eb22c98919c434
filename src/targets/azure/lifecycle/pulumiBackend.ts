import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { z } from "zod";
import { displayUrl } from "./redact.ts";
import { absoluteBackendUrl } from "./stack.ts";

/**
 * Which Pulumi backend a run's stack lives in, and where its passphrase comes from.
 *
 * By default a run's state is a file backend in its own state folder (runState.ts), beside a
 * random passphrase latlab writes there: both go with the machine. A backend elsewhere —
 * `azblob://<container>?storage_account=<account>`, or any file:// folder outside the state folder
 * — outlives the machine (a GitHub runner that vanished), and `latlab destroy <runId> --backend
 * <url>` can finish the run from another one. For that the passphrase must outlive it too, and
 * must not sit on the machine's disk: it comes from the environment (a secret in a workflow), and
 * latlab refuses such a backend without one before anything is deployed.
 *
 * Pulumi treats file://, azblob://, s3:// and gs:// alike, as "DIY" backends over gocloud.dev's
 * blob buckets (pulumi/pulumi pkg/backend/diy/backend.go @ v3.259.0: New(), "The URL must use one
 * of the schemes supported by the go-cloud blob package … file, s3, gs, azblob"; the same locks,
 * checkpoints and stack tags on each), which is why a file:// folder stands in for Azure Blob
 * Storage in latlab's tests. An azblob:// backend authenticates as gocloud.dev's azureblob opener
 * says (gocloud.dev blob/azureblob/azureblob.go package doc, the version pulumi v3.259.0's go.mod
 * pins): AZURE_STORAGE_ACCOUNT (or the URL's `storage_account`) with AZURE_STORAGE_KEY, a
 * connection string, AZURE_STORAGE_SAS_TOKEN, or else azidentity's DefaultAzureCredential (the
 * Azure CLI's login, workload identity…). Pulumi's own guide:
 * https://www.pulumi.com/docs/iac/guides/basics/using-a-diy-backend/ (`azblob://<container-path>`).
 */

/** The backend for `latlab run` and `latlab destroy` when `--backend` is not given (a workflow sets it from a repository variable). */
export const BACKEND_ENV = "LATLAB_PULUMI_BACKEND";
/** Pulumi's own variables for the passphrase secrets provider (pkg/secrets/passphrase/manager.go readPassphrase @ v3.259.0). */
export const PASSPHRASE_ENV = "PULUMI_CONFIG_PASSPHRASE";
export const PASSPHRASE_FILE_ENV = "PULUMI_CONFIG_PASSPHRASE_FILE";

export class PulumiBackendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PulumiBackendError";
  }
}

/** Where a backend URL came from, as the error names it. */
export type BackendSource = "--backend" | typeof BACKEND_ENV;

/**
 * A backend URL: a scheme and something after `://` (Pulumi's own check is its URL mux; this one
 * only catches what is surely a mistake, e.g. a bare container name). An azblob:// URL names its
 * container as the host: `azblob://<container>?storage_account=<account>`.
 */
const BackendUrlSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/\S/, "expected a Pulumi backend URL such as azblob://<container>?storage_account=<account> or file:///<folder>")
  .refine((u) => URL.canParse(u), "not a URL")
  .refine((u) => !/^azblob:\/\//i.test(u) || new URL(u).hostname !== "", "azblob:// needs a container: azblob://<container>?storage_account=<account>");

/** The backend a command was asked for: `--backend`, else LATLAB_PULUMI_BACKEND (empty = unset: an unset repository variable expands to ""). */
export function requestedBackend(flag: string | undefined, env: NodeJS.ProcessEnv): { url: string; from: BackendSource } | undefined {
  const raw: { url: string; from: BackendSource } | undefined =
    flag !== undefined ? { url: flag, from: "--backend" } : env[BACKEND_ENV]?.trim() ? { url: env[BACKEND_ENV]!, from: BACKEND_ENV } : undefined;
  if (!raw) return undefined;
  const parsed = BackendUrlSchema.safeParse(raw.url);
  if (!parsed.success) throw new PulumiBackendError(`${raw.from}: "${raw.url}" is not a Pulumi backend URL: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  // file://~/x and file://./x made absolute: a later `latlab destroy` may run from another folder.
  return { url: absoluteBackendUrl(parsed.data), from: raw.from };
}

/** The folder of a file:// backend URL (as Pulumi reads it: the rest of the URL is a path; a query is options). */
const fileBackendFolder = (url: string) => url.slice("file://".length).replace(/\?.*$/, "");

/** Is this the run's own file backend, in (or under) its state folder — gone with the machine? */
export function isStateFolderBackend(url: string, stateDir: string): boolean {
  if (!url.startsWith("file://")) return false;
  const rel = relative(resolve(stateDir), resolve(fileBackendFolder(url)));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

export interface RunBackend {
  url: string;
  /** Outlives the run's state folder: the passphrase must come from the environment, and the stack carries what destroy needs (stack tags). */
  remote: boolean;
  /** Where the URL came from; absent for the default. */
  from?: BackendSource;
}

/**
 * A file backend's folder must exist: Pulumi does not make it ("unable to open state directory …:
 * no such file or directory", as a missing azblob container fails too). Said before anything starts.
 * (The run's own state folder is made by latlab, before the stack is opened.)
 */
export function checkBackendReachable(backend: { url: string; from?: BackendSource }): void {
  if (!backend.url.startsWith("file://")) return;
  const folder = fileBackendFolder(backend.url);
  if (!existsSync(folder)) throw new PulumiBackendError(`${backend.from ?? "backend"}: ${folder} does not exist: a Pulumi file backend is a folder that must exist (mkdir it first)`);
}

/** The backend of a new run: `--backend`, else LATLAB_PULUMI_BACKEND, else a file backend in its state folder. */
export function runBackend(flag: string | undefined, stateDir: string, env: NodeJS.ProcessEnv): RunBackend {
  const requested = requestedBackend(flag, env);
  if (!requested) return { url: `file://${stateDir}`, remote: false };
  const remote = !isStateFolderBackend(requested.url, stateDir);
  if (remote) checkBackendReachable(requested);
  return { url: requested.url, remote, from: requested.from };
}

export interface EnvPassphrase {
  passphrase: string;
  from: typeof PASSPHRASE_ENV | typeof PASSPHRASE_FILE_ENV;
}

/**
 * The stack passphrase the environment gives, read as the Pulumi CLI reads it
 * (pkg/secrets/passphrase/manager.go readPassphrase @ v3.259.0): PULUMI_CONFIG_PASSPHRASE first,
 * else the file PULUMI_CONFIG_PASSPHRASE_FILE names (relative to the working folder), its content
 * trimmed of surrounding white space. One deviation: an empty PULUMI_CONFIG_PASSPHRASE counts as
 * unset (Pulumi accepts it) — a workflow's unset secret expands to "", and a stack encrypted with
 * the empty passphrase protects nothing. Undefined when neither gives one.
 */
export function passphraseFromEnv(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): EnvPassphrase | undefined {
  const direct = env[PASSPHRASE_ENV];
  if (direct) return { passphrase: direct, from: PASSPHRASE_ENV };
  const file = env[PASSPHRASE_FILE_ENV];
  if (!file) return undefined;
  const path = resolve(cwd, file);
  let content: string;
  try {
    content = readFileSync(path, "utf8");
  } catch (e) {
    throw new PulumiBackendError(`${PASSPHRASE_FILE_ENV}: cannot read ${path}: ${(e as Error).message}`);
  }
  const passphrase = content.trim();
  if (!passphrase) throw new PulumiBackendError(`${PASSPHRASE_FILE_ENV}: ${path} is empty: it must hold the stack's passphrase`);
  return { passphrase, from: PASSPHRASE_FILE_ENV };
}

/** The passphrase of a stack in a backend that outlives the machine: from the environment, or a clear refusal. */
export function remotePassphrase(backend: { url: string; from?: BackendSource }, env: NodeJS.ProcessEnv, cwd?: string): EnvPassphrase {
  const found = passphraseFromEnv(env, cwd);
  if (found) return found;
  throw new PulumiBackendError(
    `the Pulumi backend ${displayUrl(backend.url)}${backend.from ? ` (${backend.from})` : ""} outlives this machine, so the stack's passphrase must come from the environment: ` +
      `set ${PASSPHRASE_ENV} (in a workflow, from a secret such as LATLAB_PULUMI_PASSPHRASE) or ${PASSPHRASE_FILE_ENV}, the same value every time for that backend. ` +
      "latlab never writes the passphrase of such a stack to disk. Nothing was deployed",
  );
}
