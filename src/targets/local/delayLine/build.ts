import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CommandError, type ExecFn } from "../exec.ts";

/**
 * Builds the delay line's helper (delayline.c) with the system's C compiler, once per version of
 * its source: the binary is kept in a cache folder named by the source's hash, so an edited
 * source builds anew and an unchanged one never rebuilds. Nothing is downloaded: the compiler
 * and the libraries come from Debian's packages, installed by .ci/run or latlab's preflight.
 */

/** The helper's source, beside this module (build.ts copies it into dist/ as a run-time asset). */
export const DELAY_LINE_SOURCE = fileURLToPath(new URL("./delayline.c", import.meta.url));

/** Debian packages the delay line needs: the compiler, libnetfilter_queue's headers, the rules' tool. */
export const DELAY_LINE_DEBIAN_PACKAGES: readonly string[] = ["gcc", "libnetfilter-queue-dev", "iptables"];

/** Where built helpers are kept (one folder per source hash). */
export const DEFAULT_DELAY_LINE_CACHE = join(homedir(), ".cache", "latlab");

export const HELPER_NAME = "latlab-delayline";

/** Where the helper built from `sourceText` lives under `cacheRoot`. */
export function helperBinaryPath(cacheRoot: string, sourceText: string): string {
  const hash = createHash("sha256").update(sourceText).digest("hex").slice(0, 12);
  return join(cacheRoot, `delayline-${hash}`, HELPER_NAME);
}

/** The compile command: optimised, warnings on, linked against libnetfilter_queue (and libnfnetlink, whose socket-buffer call it uses). */
export function helperBuildArgv(compiler: string, source: string, out: string): string[] {
  return [compiler, "-O2", "-Wall", "-Wextra", "-o", out, source, "-lnetfilter_queue", "-lnfnetlink", "-lm"];
}

export interface BuildOptions {
  exec: ExecFn;
  cacheRoot?: string;
  source?: string;
  compiler?: string;
}

/** The helper's path, compiling it first when this version of the source has no binary yet. */
export async function ensureHelperBuilt(options: BuildOptions): Promise<string> {
  const source = options.source ?? DELAY_LINE_SOURCE;
  const binary = helperBinaryPath(options.cacheRoot ?? DEFAULT_DELAY_LINE_CACHE, readFileSync(source, "utf8"));
  if (existsSync(binary)) return binary;
  mkdirSync(dirname(binary), { recursive: true });
  // Built under another name and renamed: a concurrent build or a killed one never leaves a half-written binary at `binary`.
  const partial = `${binary}.${process.pid}.partial`;
  const argv = helperBuildArgv(options.compiler ?? "cc", source, partial);
  const r = await options.exec(argv, { timeoutMs: 120_000 });
  if (r.code !== 0) {
    rmSync(partial, { force: true });
    throw new CommandError(argv, r, `building the delay line's helper (needs Debian's ${DELAY_LINE_DEBIAN_PACKAGES.join(", ")})`);
  }
  renameSync(partial, binary);
  return binary;
}
