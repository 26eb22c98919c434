/**
 * The Pulumi CLI version latlab is tested with (../shared/tools/pulumi builds it; .ci/run puts it
 * on PATH). Another major or minor version may store state, lock stacks or print errors
 * differently from what latlab reads (fileBackendRecovery.ts follows v3.259.0's file backend),
 * so latlab refuses it unless told otherwise; patch releases are accepted.
 */
export const PULUMI_CLI_VERSION = "3.259.0";

/** `off` accepts any Pulumi CLI version (at your own risk). */
export const VERSION_CHECK_ENV = "LATLAB_PULUMI_VERSION_CHECK";

export class PulumiVersionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PulumiVersionError";
  }
}

const majorMinor = (v: string) => /^v?(\d+)\.(\d+)\./.exec(v.trim())?.slice(1, 3).join(".");

/** Is `found` the same major.minor as `wanted`? */
export function compatiblePulumiVersion(found: string, wanted: string = PULUMI_CLI_VERSION): boolean {
  const f = majorMinor(found);
  return f !== undefined && f === majorMinor(wanted);
}

export const versionCheckOff = (env: NodeJS.ProcessEnv) => env[VERSION_CHECK_ENV]?.toLowerCase() === "off";

/** What to tell someone whose Pulumi CLI is another version than latlab's. */
export function pulumiVersionMessage(found: string, wanted: string, where: string): string {
  return (
    `azure target: the Pulumi CLI at ${where} is v${found.replace(/^v/, "")}, but latlab is tested with v${wanted} ` +
    `(a different major/minor version may keep state and locks differently). Install v${wanted} — ` +
    `\`curl -fsSL https://get.pulumi.com | sh -s -- --version ${wanted}\`, or pass --install-pulumi to let latlab install exactly that version ` +
    `(PulumiCommand.install into ~/.pulumi/versions/${wanted}/) — or set ${VERSION_CHECK_ENV}=off to use v${found.replace(/^v/, "")} anyway.`
  );
}

/** Throws PulumiVersionError unless `found` matches `wanted`'s major.minor or the check is off. */
export function checkPulumiVersion(found: string | undefined, wanted: string, where: string, env: NodeJS.ProcessEnv = process.env): void {
  if (versionCheckOff(env)) return;
  if (found === undefined) throw new PulumiVersionError(`azure target: the Pulumi CLI at ${where} did not say its version; latlab needs v${wanted} (or set ${VERSION_CHECK_ENV}=off)`);
  if (!compatiblePulumiVersion(found, wanted)) throw new PulumiVersionError(pulumiVersionMessage(found, wanted, where));
}
