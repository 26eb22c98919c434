/**
 * Regenerates src/targets/azure/catalog/sizes/skus.snapshot.json from a git clone of
 * github.com/Azure/karpenter-provider-azure, whose generator records Azure's Resource SKUs API
 * (see scripts/karpenterSkus.ts). Reads the files at one commit with `git show`, so the snapshot
 * names exactly what it was made from:
 *
 *   npm run skus:snapshot -- --karpenter /path/to/karpenter-provider-azure [--commit SHA] [--out FILE]
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { SKU_SNAPSHOT_FILE, SkuSnapshotSchema, type SkuSnapshot } from "../src/targets/azure/catalog/sizes/skuSnapshot.ts";
import { parseKarpenterSkuGo, parseKnownSkusYaml } from "./karpenterSkus.ts";

const KNOWN = "pkg/providers/instancetype/known_skus.yaml";

export function makeSkuSnapshot(gitDir: string, commit: string, today: string): SkuSnapshot {
  const git = (...args: string[]) => execFileSync("git", ["--git-dir", gitDir, ...args], { encoding: "utf8", maxBuffer: 64 << 20 });
  const sha = git("rev-parse", `${commit}^{commit}`).trim();
  const committedAt = git("log", "-1", "--format=%cI", sha).trim();
  const goFiles = git("ls-tree", "-r", "--name-only", sha, "pkg/fake/").split("\n").filter((p) => /^pkg\/fake\/zz_generated\.sku\.[a-z0-9]+\.go$/.test(p));
  if (!goFiles.length) throw new Error(`${sha}: no pkg/fake/zz_generated.sku.<region>.go files`);
  const files: SkuSnapshot["source"]["files"] = [];
  const skus: SkuSnapshot["skus"] = [];
  for (const path of goFiles.sort()) {
    const parsed = parseKarpenterSkuGo(git("show", `${sha}:${path}`));
    files.push({ path, generatedAt: parsed.generatedAt, what: `full ResourceSku entries of ${parsed.skus.length} selected sizes in ${parsed.region}` });
    skus.push(...parsed.skus);
  }
  const names = parseKnownSkusYaml(git("show", `${sha}:${KNOWN}`));
  const lastKnown = git("log", "-1", "--format=%cI", sha, "--", KNOWN).trim();
  // known_skus.yaml carries no generation time of its own: its date is the commit that last regenerated it.
  files.push({ path: KNOWN, generatedAt: lastKnown || null, what: `${Object.keys(names).length} size names seen in any region, with their quota family and the date each was first seen; generatedAt is the date of the commit that last regenerated the file (it records none itself)` });
  return SkuSnapshotSchema.parse({
    source: {
      repository: "github.com/Azure/karpenter-provider-azure",
      commit: sha,
      committedAt,
      files,
      generator: "its hack/code/instancetype_gen/main.go, run by hack/codegen.sh against Azure's Resource SKUs API (Microsoft.Compute/skus): --format testfakes for the .go files, --format nameonly over all regions for known_skus.yaml",
    },
    madeBy: `npm run skus:snapshot -- --karpenter <clone> --commit ${sha}`,
    madeAt: today,
    note:
      "Offline planning data only. Full capabilities (vCPUs, AcceleratedNetworkingEnabled, HyperVGenerations, DiskControllerTypes, zones, restrictions) exist for the sizes in `skus`, as Azure returned them to the generator's subscription on the file's date; for the other names only the quota family is known. At run time latlab reads the Resource SKUs API itself and that answer wins.",
    skus,
    names,
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { karpenter: { type: "string" }, commit: { type: "string", default: "HEAD" }, out: { type: "string" } } });
  if (!values.karpenter) {
    console.error("usage: npm run skus:snapshot -- --karpenter <git dir or clone of Azure/karpenter-provider-azure> [--commit SHA] [--out FILE]");
    process.exit(2);
  }
  let gitDir = values.karpenter;
  try {
    gitDir = execFileSync("git", ["-C", values.karpenter, "rev-parse", "--git-dir"], { encoding: "utf8" }).trim();
    if (!gitDir.startsWith("/")) gitDir = `${values.karpenter}/${gitDir}`;
  } catch {
    // A bare git dir (as `fetch` leaves) is used as it is.
  }
  const snapshot = makeSkuSnapshot(gitDir, values.commit!, new Date().toISOString().slice(0, 10));
  const out = values.out ?? fileURLToPath(SKU_SNAPSHOT_FILE);
  writeFileSync(out, `${JSON.stringify(snapshot, null, 1)}\n`);
  console.log(`${out}: ${snapshot.skus.length} full SKU entries, ${Object.keys(snapshot.names).length} names, from ${snapshot.source.repository}@${snapshot.source.commit}`);
}
