import { pulumiConfigSource, runAzureEntry } from "./entryConfig.ts";
import type { AzureProgramOutputs } from "./program.ts";

/**
 * The Pulumi program of Pulumi.yaml (`pulumi up -c latlab:experiment=ppg-vs-zone`): Pulumi calls
 * the default export of an ES module entry and makes its result the stack outputs. Nothing else
 * may be exported here (the runtime refuses an entry with both a default and named exports);
 * the config it reads is documented in entryConfig.ts.
 */
export default async function azureEntry(): Promise<AzureProgramOutputs> {
  return runAzureEntry(pulumiConfigSource);
}
