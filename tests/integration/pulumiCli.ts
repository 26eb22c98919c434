import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

/**
 * The folder holding the Pulumi CLI the Azure tests drive: the `pulumi` on PATH, else the one
 * shared/tools/pulumi/install.sh built (.ci/run builds it and puts it on PATH). Missing, the
 * tests fail saying how to get it: they are real tests, not skipped ones.
 */
export function pulumiBinDir(): string {
  const onPath = spawnSync("sh", ["-c", "command -v pulumi"], { encoding: "utf8" }).stdout.trim();
  if (onPath && existsSync(join(dirname(onPath), "pulumi-language-nodejs"))) return dirname(onPath);
  const cached = join(process.env.LATLAB_PULUMI_HOME ?? join(homedir(), ".cache/latlab/pulumi-v3.259.0"), "bin");
  if (existsSync(join(cached, "pulumi"))) return cached;
  throw new Error(
    `no Pulumi CLI: build it with ${resolve(import.meta.dirname, "../../../shared/tools/pulumi/install.sh")} (prints its folder; put it first on PATH), or install Pulumi`,
  );
}
