import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { extractExcerpt, formatExcerpt, type ExtractPlanEntry, type ReadSpecFile } from "./extractCore.ts";

/**
 * Produces the spec excerpts of this folder from Azure's REST API specifications.
 *
 *   node --import tsx src/targets/azure/emulator/spec/extractSpec.ts <spec-source> <out-dir>
 *        [--rev <commit>] [--provenance <file.json>]
 *
 * <spec-source> is either a git directory of Azure/azure-rest-api-specs (files are read with
 * `git show <rev>:<path>`, never checked out: the repository is over a gigabyte) or a plain
 * directory holding the same repository paths. --provenance names a JSON file
 * `{ "files": { "<repo path>": { "commit": "<sha>", "note"?: "…" } } }` recorded in the excerpt
 * when the files do not all come from one commit (see README.md).
 */

const REPOSITORY = "Azure/azure-rest-api-specs";
const NET = "specification/network/resource-manager/Microsoft.Network/stable/2024-05-01";
const COMPUTE = "specification/compute/resource-manager/Microsoft.Compute/ComputeRP/stable/2024-11-01";
const RESOURCES = "specification/resources/resource-manager/Microsoft.Resources/stable/2024-03-01";

/** The api-versions @pulumi/azure-native 3.28.0 uses by default for latlab's ten types. */
export const EXTRACT_PLAN: readonly ExtractPlanEntry[] = [
  {
    provider: "resources",
    apiVersion: "2024-03-01",
    types: [{ armType: "Microsoft.Resources/resourceGroups", file: `${RESOURCES}/resources.json` }],
  },
  {
    provider: "network",
    apiVersion: "2024-05-01",
    types: [
      { armType: "Microsoft.Network/virtualNetworks", file: `${NET}/virtualNetwork.json` },
      { armType: "Microsoft.Network/virtualNetworks/subnets", file: `${NET}/virtualNetwork.json` },
      { armType: "Microsoft.Network/virtualNetworks/virtualNetworkPeerings", file: `${NET}/virtualNetwork.json` },
      { armType: "Microsoft.Network/publicIPAddresses", file: `${NET}/publicIpAddress.json` },
      { armType: "Microsoft.Network/networkSecurityGroups", file: `${NET}/networkSecurityGroup.json` },
      { armType: "Microsoft.Network/networkInterfaces", file: `${NET}/networkInterface.json` },
    ],
  },
  {
    provider: "compute",
    apiVersion: "2024-11-01",
    types: [
      { armType: "Microsoft.Compute/virtualMachines", file: `${COMPUTE}/virtualMachine.json` },
      { armType: "Microsoft.Compute/proximityPlacementGroups", file: `${COMPUTE}/proximityPlacementGroup.json` },
      { armType: "Microsoft.Compute/availabilitySets", file: `${COMPUTE}/availabilitySet.json` },
    ],
  },
];

const ProvenanceSchema = z.object({
  files: z.record(z.string(), z.object({ commit: z.string().regex(/^[0-9a-f]{40}$/), note: z.string().optional() }).strict()),
});

function isGitDir(dir: string): boolean {
  return existsSync(join(dir, "HEAD")) && existsSync(join(dir, "objects"));
}

function reader(source: string, rev: string): { read: ReadSpecFile; revision: string | null } {
  if (isGitDir(source)) {
    const revision = execFileSync("git", ["--git-dir", source, "rev-parse", `${rev}^{commit}`], { encoding: "utf8" }).trim();
    const read: ReadSpecFile = (path) =>
      JSON.parse(execFileSync("git", ["--git-dir", source, "show", `${revision}:${path}`], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }));
    return { read, revision };
  }
  if (!existsSync(join(source, "specification"))) throw new Error(`${source}: neither a git directory nor a folder with specification/`);
  return { read: (path) => JSON.parse(readFileSync(join(source, path), "utf8")), revision: null };
}

export function main(argv: string[]): void {
  const positional: string[] = [];
  let rev = "HEAD";
  let provenanceFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--rev") rev = argv[++i] ?? rev;
    else if (a === "--provenance") provenanceFile = argv[++i];
    else positional.push(a);
  }
  const [source, outDir] = positional;
  if (source === undefined || outDir === undefined) {
    throw new Error("usage: extractSpec.ts <spec-git-dir|spec-dir> <out-dir> [--rev <commit>] [--provenance <file.json>]");
  }
  const { read, revision } = reader(source, rev);
  const provenance = provenanceFile === undefined ? undefined : ProvenanceSchema.parse(JSON.parse(readFileSync(provenanceFile, "utf8")));
  mkdirSync(outDir, { recursive: true });
  for (const entry of EXTRACT_PLAN) {
    const { excerpt, warnings } = extractExcerpt(entry, read, {
      repository: REPOSITORY,
      revision,
      commitOf: (f) => provenance?.files[f]?.commit ?? revision,
      noteOf: (f) => provenance?.files[f]?.note,
    });
    const out = join(outDir, `${entry.provider}-${entry.apiVersion}.json`);
    writeFileSync(out, formatExcerpt(excerpt));
    const defs = Object.keys(excerpt.definitions).length;
    process.stdout.write(`${out}: ${Object.keys(excerpt.resourceTypes).length} types, ${defs} definitions, ${excerpt.source.files.length} files\n`);
    for (const w of warnings) process.stdout.write(`  warning: ${w}\n`);
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
