import { z } from "zod";

/**
 * Faults the emulator injects on request, so that latlab's handling of what Azure does to real
 * runs can be tested: a VM that cannot be allocated, a size that is not available, a quota that
 * is exhausted, a delete refused with 409, a VM whose cloud-init never finishes. Schema first:
 * they come from a test, or from LATLAB_EMULATOR_FAULTS (JSON) for a run on the command line.
 */

/** ARM's codes for a create that Azure refuses. */
export const CREATE_FAULT_CODES = ["AllocationFailed", "SkuNotAvailable", "QuotaExceeded"] as const;

const match = {
  /** ARM type, e.g. "Microsoft.Compute/virtualMachines" (case-insensitive). */
  type: z.string().min(1),
  /** Only resources whose name contains this (case-insensitive); every one of the type when absent. */
  name: z.string().min(1).optional(),
  /** How many times the fault fires before it stops (default: always). */
  times: z.number().int().positive().optional(),
};

export const FaultSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("create-error"), code: z.enum(CREATE_FAULT_CODES), ...match }).strict(),
  z.object({ kind: z.literal("delete-conflict"), ...match }).strict(),
  z.object({ kind: z.literal("vm-never-ready"), name: z.string().min(1).optional(), times: z.number().int().positive().optional() }).strict(),
  /**
   * The runner dies in the middle of `pulumi up` (power cut, OOM killer, kill -9): when a PUT of
   * this type arrives, the emulator saves its state and SIGKILLs its own process group — latlab,
   * the Pulumi CLI, the plugin — leaving a stale Pulumi lock and live VMs, as a real crash does.
   */
  z.object({ kind: z.literal("kill-runner"), ...match }).strict(),
  /**
   * A VM Azure accepts, then cannot allocate under its constraints (its PPG's datacenter lacks the
   * size, a zone, Accelerated Networking…): the operation fails with OverconstrainedAllocationRequest
   * and the VM stays in ARM as Failed, as AllocationFailed does (arm/allocation.ts). VMs only.
   */
  z.object({ kind: z.literal("overconstrained-allocation"), name: z.string().min(1).optional(), times: z.number().int().positive().optional() }).strict(),
  /**
   * A PPG whose members Azure did not keep together (planned maintenance moved one: co-location.md,
   * "Planned maintenance and Proximity Placement Groups"): its GET with includeColocationStatus=true
   * says NotAligned, and calls out its last member VM. `name`: only PPGs whose name contains it;
   * `times`: only that many such reads (default: every one); `type` need not be given.
   */
  z
    .object({
      kind: z.literal("ppg-not-aligned"),
      type: z.literal("Microsoft.Compute/proximityPlacementGroups").default("Microsoft.Compute/proximityPlacementGroups"),
      name: z.string().min(1).optional(),
      times: z.number().int().positive().optional(),
    })
    .strict(),
]);
export type Fault = z.infer<typeof FaultSchema>;
export const FaultsSchema = z.array(FaultSchema);

/** Parses a JSON setting (an environment variable) against its schema; throws naming the variable and the bad entry. */
export function parseJsonSetting<T>(schema: z.ZodType<T>, json: string, source: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (e) {
    throw new Error(`${source}: not JSON: ${(e as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`${source}: ${parsed.error.issues.map((i) => `[${i.path.join(".")}] ${i.message}`).join("; ")}`);
  return parsed.data;
}

/** Parses LATLAB_EMULATOR_FAULTS-style JSON; throws naming the bad entry. */
export const parseFaults = (json: string, source = "LATLAB_EMULATOR_FAULTS"): Fault[] => parseJsonSetting(FaultsSchema, json, source);

/** The faults still armed, with what each has fired. */
export class FaultBook {
  private readonly fired: number[];
  readonly faults: readonly Fault[];

  constructor(faults: readonly Fault[]) {
    this.faults = faults;
    this.fired = faults.map(() => 0);
  }

  /** The first armed fault of `kind` matching the resource, consumed once; undefined when none. */
  take<K extends Fault["kind"]>(kind: K, type: string, name: string): Extract<Fault, { kind: K }> | undefined {
    for (const [i, f] of this.faults.entries()) {
      if (f.kind !== kind) continue;
      const t = "type" in f ? f.type : "Microsoft.Compute/virtualMachines";
      if (t.toLowerCase() !== type.toLowerCase()) continue;
      if (f.name && !name.toLowerCase().includes(f.name.toLowerCase())) continue;
      if (f.times !== undefined && this.fired[i]! >= f.times) continue;
      this.fired[i]!++;
      return f as Extract<Fault, { kind: K }>;
    }
    return undefined;
  }

  /** For the operations log and the tests: how often each fault fired. */
  report(): { fault: Fault; fired: number }[] {
    return this.faults.map((fault, i) => ({ fault, fired: this.fired[i]! }));
  }
}
