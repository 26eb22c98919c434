/**
 * Regenerates src/targets/azure/prices.snapshot.json from the anonymous Azure Retail Prices API:
 * the Linux pay-as-you-go price of every VM size and the Standard static IPv4 public IP price in
 * every region latlab knows (capabilities.ts), one VM query and one IP query per region.
 *
 *   npm run prices:snapshot                          query the API (needs prices.azure.com)
 *   npm run prices:snapshot -- --from-recorded DIR --recorded-at YYYY-MM-DD
 *                                                    the same from saved API pages, offline
 *   npm run prices:snapshot -- --from-karpenter-table FILE --origin TEXT
 *                                                    the same from the price table Azure's Karpenter
 *                                                    provider generates from the API (its
 *                                                    pkg/providers/pricing/zz_generated.pricing.go);
 *                                                    --origin names repository, commit and path
 *   options: --out FILE (default: the bundled snapshot)
 *
 * Recorded pages are JSON files, each a page as the API returns it ({ Items, NextPageLink, … });
 * DIR/README.md should say where they came from: its first paragraph goes into the snapshot.
 */
import { readFileSync, readdirSync, writeFileSync, existsSync } from "node:fs";
import { parseArgs as parseCliArgs } from "node:util";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { REGIONS, VM_SIZES } from "../src/targets/azure/catalog/capabilities.ts";
import { generatePriceSnapshot, loadPriceSnapshot, recordedRetailApi, SNAPSHOT_FILE, snapshotFromTable, type FetchLike, type PriceSnapshot } from "../src/targets/azure/catalog/prices.ts";
import { parseKarpenterPriceTable } from "./karpenterPriceTable.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
export const DEFAULT_OUT = fileURLToPath(SNAPSHOT_FILE);

const ArgsSchema = z
  .object({
    fromRecorded: z.string().min(1).optional(),
    // The date the recorded responses were taken: the prices are as of then, not as of today.
    recordedAt: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}(T[\d:.]+Z)?$/, "--recorded-at takes a date, YYYY-MM-DD")
      .optional(),
    fromKarpenterTable: z.string().min(1).optional(),
    origin: z.string().min(1).optional(),
    out: z.string().min(1).default(DEFAULT_OUT),
    help: z.boolean().default(false),
  })
  .refine((a) => !a.fromRecorded || a.recordedAt, { message: "--from-recorded needs --recorded-at YYYY-MM-DD (when the pages were fetched from the API)" })
  .refine((a) => a.fromRecorded || !a.recordedAt, { message: "--recorded-at goes with --from-recorded" })
  .refine((a) => !(a.fromRecorded && a.fromKarpenterTable), { message: "--from-recorded and --from-karpenter-table exclude each other" })
  .refine((a) => !a.fromKarpenterTable || a.origin, { message: "--from-karpenter-table needs --origin (repository, commit and path of the table)" })
  .refine((a) => a.fromKarpenterTable || !a.origin, { message: "--origin goes with --from-karpenter-table" });
export type Args = z.infer<typeof ArgsSchema>;

export function parseArgs(argv: readonly string[]): Args {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseCliArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        "from-recorded": { type: "string" },
        "recorded-at": { type: "string" },
        "from-karpenter-table": { type: "string" },
        origin: { type: "string" },
        out: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    throw new Error(`${(e as Error).message} (see --help)`);
  }
  const camel = Object.fromEntries(Object.entries(values).map(([k, v]) => [k.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()), v]));
  const parsed = ArgsSchema.safeParse(camel);
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => i.message).join("; "));
  return parsed.data;
}

/** The recorded pages of a folder, in file-name order, and what its README says of them. */
export function readRecorded(dir: string): { pages: unknown[]; origin: string } {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort();
  if (!files.length) throw new Error(`${dir}: no .json pages`);
  const pages = files.map((f) => {
    try {
      return JSON.parse(readFileSync(join(dir, f), "utf8")) as unknown;
    } catch (e) {
      throw new Error(`${join(dir, f)}: not JSON (${(e as Error).message})`);
    }
  });
  const readme = join(dir, "README.md");
  // The first paragraph that is not a heading: where the rows come from, in the recorder's words.
  const origin = existsSync(readme)
    ? (readFileSync(readme, "utf8")
        .split(/\n\s*\n/)
        .map((p) => p.trim())
        .find((p) => p && !p.startsWith("#"))
        ?.replace(/\s+/g, " ") ?? "not stated (README.md is empty)")
    : `not stated (no README.md in ${dir})`;
  return { pages, origin };
}

export interface RunOptions {
  fetchFn?: FetchLike;
  now?: Date;
  /** How the script was started, for the snapshot; by default from npm's environment. */
  invokedAs?: string;
  log?: (line: string) => void;
}

export async function run(argv: readonly string[], options: RunOptions = {}): Promise<{ snapshot: PriceSnapshot; out: string } | undefined> {
  const log = options.log ?? ((l: string) => console.log(l));
  const args = parseArgs(argv);
  if (args.help) {
    log(readFileSync(fileURLToPath(import.meta.url), "utf8").split("*/")[0]!.replace(/^\/\*\*?|^ \* ?/gm, "").trim());
    return undefined;
  }
  const invokedAs = options.invokedAs ?? (process.env.npm_lifecycle_event === "prices:snapshot" ? "npm run prices:snapshot" : "node scripts/updatePriceSnapshot.ts");
  const command = [invokedAs, ...(argv.length && invokedAs.startsWith("npm ") ? ["--"] : []), ...argv].join(" ");
  const now = options.now ?? new Date();
  if (args.fromKarpenterTable) {
    const table = parseKarpenterPriceTable(readFileSync(args.fromKarpenterTable, "utf8"), args.fromKarpenterTable);
    const snapshot = snapshotFromTable({
      prices: table.prices,
      generatedAt: table.generatedAt,
      origin: args.origin!,
      regions: Object.keys(REGIONS),
      sizes: Object.keys(VM_SIZES),
      // The table has VMs only: public IP prices stay as the current snapshot has them.
      publicIps: loadPriceSnapshot(existsSync(args.out) ? args.out : DEFAULT_OUT).publicIpStandardStatic,
      command,
      now,
    });
    return write(snapshot, args.out, log, `from the table of ${table.generatedAt}`);
  }
  let fetchFn = options.fetchFn ?? ((url: string) => fetch(url, { signal: AbortSignal.timeout(60_000) }));
  let recorded: { dir: string; pages: number; origin: string } | undefined;
  if (args.fromRecorded) {
    const { pages, origin } = readRecorded(args.fromRecorded);
    fetchFn = recordedRetailApi(pages);
    const rel = relative(ROOT, resolve(args.fromRecorded));
    recorded = { dir: rel.startsWith("..") ? resolve(args.fromRecorded) : rel, pages: pages.length, origin };
  }
  const snapshot = await generatePriceSnapshot({
    regions: Object.keys(REGIONS),
    sizes: Object.keys(VM_SIZES),
    fetchFn,
    command,
    fetchedAt: args.recordedAt ?? now.toISOString(),
    generatedAt: now.toISOString(),
    ...(recorded ? { recorded } : {}),
  });
  return write(snapshot, args.out, log, recorded ? `from ${recorded.pages} recorded pages` : "");
}

function write(snapshot: PriceSnapshot, out: string, log: (line: string) => void, how: string): { snapshot: PriceSnapshot; out: string } {
  writeFileSync(out, `${JSON.stringify(snapshot, null, 2)}\n`);
  const priced = Object.values(snapshot.vm).reduce((n, sizes) => n + Object.keys(sizes).length, 0);
  log(`wrote ${out}: ${priced} VM prices, ${Object.keys(snapshot.publicIpStandardStatic.byRegion).length} public IP prices by region${how ? ` ${how}` : ""}`);
  if (snapshot.notFound?.length) log(`no price (estimates needing them say UNKNOWN): ${snapshot.notFound.length}: ${snapshot.notFound.join(", ")}`);
  return { snapshot, out };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  run(process.argv.slice(2)).catch((e: unknown) => {
    console.error(`prices:snapshot: ${(e as Error).message}`);
    process.exitCode = 1;
  });
}
