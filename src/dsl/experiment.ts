import { z } from "zod";
import { NetworkPathSchema, type AxisValue } from "../plan/types.ts";
import { TOOL_NAMES, findTool, type ToolName, type tools } from "../tools/registry.ts";
import { AXIS_NAMES, AxesSchema, type Axes, type AxisValues } from "./axes.ts";
import { ExperimentDefinitionError, issuesFromZod, type DefinitionIssue } from "./errors.ts";
import { baselineMap, expandMatrix, type AxisPoint, type AxisTable } from "./matrix.ts";
import { HostSpecSchema, RegionSchema, VmSizeSchema, type HostSpec } from "./placement.ts";
import { closestName, didYouMean } from "./suggest.ts";

export const RoleSchema = z.string().regex(/^[a-z][a-z0-9]{0,11}$/, "a role is lower case letters and digits, at most 12, starting with a letter");

export const PairSchema = z
  .object({
    from: RoleSchema.describe("The role that runs the tool's client: it sends the probes."),
    to: RoleSchema.describe("The role measured to: it runs the tool's server, if the tool has one."),
  })
  .strict();

export const MeasureShapeSchema = z
  .object({
    tool: z.string().describe(`The tool: ${TOOL_NAMES.join(", ")}.`),
    params: z.record(z.string(), z.unknown()).optional().describe("The tool's parameters (see Tools); those left out take the tool's defaults."),
    pairs: z
      .array(PairSchema)
      .min(1)
      .optional()
      .describe('Which hosts measure to which, one run each: `[{ from: "client", to: "server" }]`. Default: every role but `server` measures to `server`.'),
    path: NetworkPathSchema.optional().describe("Private (VNet) or public addresses; default the variant's `path` axis, else private."),
  })
  .strict();

export const HostsObjectSchema = z.record(RoleSchema, HostSpecSchema);

const isFunction = (v: unknown): v is (...args: never[]) => unknown => typeof v === "function";

type HostsFunction = (v: Record<string, unknown>) => unknown;

/**
 * An object of roles, or a function of the variant. Picked by `typeof` rather than a union:
 * a union that fails reports only "Invalid input", hiding which host field is wrong.
 */
const HostsSchema = z
  .unknown()
  .transform((value, ctx): z.infer<typeof HostsObjectSchema> | HostsFunction => {
    if (isFunction(value)) return value as HostsFunction;
    const parsed = HostsObjectSchema.safeParse(value, { reportInput: true });
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  })
  .meta({
    // The reference (docs/dsl-reference.md) shows this type: a function has no JSON Schema.
    typeText: "{ [role]: Host } | (variant) => { [role]: Host }",
    description:
      "The hosts, by role (lower case letters and digits, at most 12), at least two: `{ client: {}, server: {} }`, or a function of the variant returning them. The first role is the anchor the `placement` axis places the others from.",
  });

export const ExperimentShapeSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9-]*$/, "a name is lower case letters, digits and '-'").describe("Lower case letters, digits and '-'; it names the run's results and resources."),
    description: z.string().min(1).describe("What the experiment asks, in a sentence: shown by `latlab list` and in the results."),
    reproduces: z.array(z.string()).default([]).describe("The field reports or posts this experiment reproduces."),
    seedSizes: z
      .array(z.object({ seed: z.string().min(1), size: VmSizeSchema, note: z.string().optional() }).strict())
      .default([])
      .describe(
        'VM sizes the reproduced reports ran that this experiment does not (e.g. a size Azure no longer lets new subscriptions deploy): `[{ seed: "seed 004", size: "Standard_D3_v2" }]`. Shown by `latlab plan` and in the report next to the sizes this run uses.',
      ),
    defaults: HostSpecSchema.default({}).describe("Placement for every host unless a host or an axis says otherwise."),
    peerRegion: RegionSchema.default("ukwest").describe('Where `placement: "cross-region"` puts the non-anchor hosts.'),
    axes: AxesSchema.default({}).describe("The infrastructure axes: each a list of values; the variants are their cartesian product (less the filter, zipped axes moving together)."),
    zip: z
      .array(z.array(z.string()).min(2))
      .default([])
      .describe(
        'Groups of axes that advance together, position by position, instead of multiplying: `[["size", "accelnet"]]`. The axes of a group have as many values each; a value may repeat in a zipped axis, a combination may not.',
      ),
    filter: z
      .custom<(v: Record<string, unknown>) => boolean>(isFunction, { message: "expected a function (variant) => boolean" })
      .optional()
      .meta({ typeText: "(variant) => boolean", description: "Keeps the variants it returns true for: a typed predicate over the axis values." }),
    hosts: HostsSchema,
    measure: z.array(MeasureShapeSchema).min(1).describe("What runs on every variant's hosts: one entry per tool (tools are not an axis)."),
    /**
     * Measurement seconds per tool run on a given target when --duration is not given
     * (seed 000 ran 11 h on Azure; the same experiment runs for seconds on the local target).
     * Keys are target names (`local`, `azure`). They are checked by the CLI, which knows the
     * target registry; the DSL stays free of it.
     */
    durationByTarget: z
      .record(z.string(), z.number().positive())
      .default({})
      .describe("Measurement time per tool run on a target (`{ local: 30, azure: 3600 }`) when `--duration` is not given. Keys must be target names. Unit: s."),
    replicas: z.number().int().min(1).default(1).describe("Independent deployments of each variant (placement is one draw); comparisons are then over replicas."),
    repetitions: z.number().int().min(1).default(1).describe("Tool runs per pair on the same hosts."),
    /**
   * Axis values naming the variant the others are compared with (default the first). Naming
   * only some axes compares each variant with its sibling that differs only in those.
   */
    baseline: z
      .record(z.string(), z.union([z.string(), z.boolean(), z.number()]))
      .optional()
      .describe("Axis values naming the variant the others are compared with (default the first). Naming only some axes compares each variant with its sibling that differs only in those."),
  })
  .strict();

type ParamsOf<T> = T extends { params: z.ZodType<infer P> } ? P : never;

/** One measurement in an experiment: a tool, its parameters, and the pairs it measures. */
export type MeasureSpec = {
  [K in ToolName]: {
    tool: K;
    params?: Partial<ParamsOf<(typeof tools)[K]>>;
    pairs?: { from: string; to: string }[];
    path?: "private" | "public";
  };
}[ToolName];

export type HostsSpec = Record<string, HostSpec>;

/** What a user writes. Generic over the axes so that `hosts` and `filter` see typed values. */
export interface ExperimentInput<A extends Axes = Axes> {
  name: string;
  description: string;
  reproduces?: string[];
  seedSizes?: { seed: string; size: string; note?: string }[];
  defaults?: HostSpec;
  peerRegion?: string;
  axes?: A;
  zip?: (keyof A & string)[][];
  filter?: (variant: AxisValues<A>) => boolean;
  hosts: HostsSpec | ((variant: AxisValues<A>) => HostsSpec);
  measure: MeasureSpec[];
  /** Default seconds per tool run, keyed by target name (`{ local: 30 }`). */
  durationByTarget?: Record<string, number>;
  replicas?: number;
  repetitions?: number;
  baseline?: Partial<AxisValues<A>>;
}

/** A validated experiment: defaults filled in, every tool's parameters parsed. */
export type Experiment = Omit<z.infer<typeof ExperimentShapeSchema>, "measure" | "hosts" | "filter"> & {
  measure: { tool: string; params: Record<string, unknown>; pairs?: { from: string; to: string }[]; path?: "private" | "public" }[];
  hosts: HostsSpec | ((variant: Record<string, unknown>) => unknown);
  filter?: (variant: Record<string, unknown>) => boolean;
  /** Marks a value made by defineExperiment, so the loader can tell it from any object. */
  readonly kind: "latlab.experiment";
};

const knownKeysAt = (path: readonly PropertyKey[]): readonly string[] | undefined => {
  if (path.length === 0) return Object.keys(ExperimentShapeSchema.shape);
  if (path.length === 1 && path[0] === "axes") return AXIS_NAMES;
  if (path[0] === "defaults" || (path[0] === "hosts" && path.length === 2)) return Object.keys(HostSpecSchema.shape);
  if (path[0] === "measure" && path.length === 2) return Object.keys(MeasureShapeSchema.shape);
  if (path[0] === "measure" && path.length === 3 && path[2] === "pairs") return ["from", "to"];
  return undefined;
};

type Shape = z.infer<typeof ExperimentShapeSchema>;

/**
 * The definition parsed field by field as well as whole: the whole parse finds unknown keys,
 * the per-field one keeps the fields that are valid, so that a wrong `replicas` does not hide
 * a wrong tool parameter. `broken` names the fields that later checks must not rely on.
 */
function parseShape(input: unknown): { def: Partial<Shape>; broken: Set<string>; issues: DefinitionIssue[] } {
  const whole = ExperimentShapeSchema.safeParse(input, { reportInput: true });
  if (whole.success) return { def: whole.data, broken: new Set(), issues: [] };
  const def: Record<string, unknown> = {};
  const broken = new Set<string>();
  const fields = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  for (const [key, schema] of Object.entries(ExperimentShapeSchema.shape)) {
    const field = (schema as z.ZodType).safeParse(fields[key]);
    if (field.success) def[key] = field.data;
    else broken.add(key);
  }
  return { def: def as Partial<Shape>, broken, issues: issuesFromZod(whole.error, [], knownKeysAt) };
}

/**
 * Declares an experiment. Validates everything that can be checked without bringing anything
 * up — fields, axis values, tool names and parameters, the matrix, the baseline — and throws
 * ExperimentDefinitionError naming every wrong field at once.
 */
export function defineExperiment<const A extends Axes>(input: ExperimentInput<A>): Experiment {
  const { def, broken, issues } = parseShape(input);
  const valid = (...keys: (keyof Shape)[]) => keys.every((k) => !broken.has(k));
  const rawName = (input as { name?: unknown } | undefined)?.name;
  const name = def.name ?? (typeof rawName === "string" ? rawName : undefined);

  const measure = (def.measure ?? []).map((m, i) => {
    const tool = findTool(m.tool);
    if (!tool) {
      issues.push({ path: `measure[${i}].tool`, message: `unknown tool "${m.tool}"${didYouMean(m.tool, TOOL_NAMES)}` });
      return { ...m, params: m.params ?? {} };
    }
    const params = tool.params.safeParse(m.params ?? {}, { reportInput: true });
    if (!params.success) {
      const toolKeys = paramKeys(tool.params);
      issues.push(...issuesFromZod(params.error, ["measure", i, "params"], (p) => (p.length === 3 ? toolKeys : undefined)));
      return { ...m, params: m.params ?? {} };
    }
    return { ...m, params: params.data as Record<string, unknown> };
  });
  if (def.measure) issues.push(...duplicatePairs(def.measure));

  let points: AxisPoint[] = [];
  if (def.axes && def.zip && valid("axes", "zip", "filter")) {
    const matrix = expandMatrix(def.axes as AxisTable, def.zip, def.filter);
    points = matrix.points;
    issues.push(...matrix.issues);
  }

  if (def.baseline && def.axes && valid("axes")) {
    const baselineIssues = checkBaseline(def.axes as AxisTable, def.baseline);
    issues.push(...baselineIssues);
    if (!baselineIssues.length && points.length) issues.push(...baselineMap(points, def.baseline).issues);
  }

  if (def.hosts && typeof def.hosts === "object") {
    const roles = Object.keys(def.hosts);
    if (roles.length < 2) issues.push({ path: "hosts", message: `an experiment needs at least two hosts, got ${roles.length}` });
    if (def.measure) issues.push(...checkPairs(def.measure, roles));
  }

  if (issues.length) throw new ExperimentDefinitionError(issues, name);
  return { ...(def as Shape), measure, kind: "latlab.experiment" } as Experiment;
}

/** Baseline values must be values of their axis: a baseline no variant has compares nothing. */
function checkBaseline(axes: AxisTable, baseline: Readonly<Record<string, AxisValue>>): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const names = Object.keys(axes);
  for (const [key, value] of Object.entries(baseline)) {
    const values = Object.hasOwn(axes, key) ? axes[key]! : undefined;
    if (!values) {
      issues.push({ path: `baseline.${key}`, message: `"${key}" is not one of the declared axes${didYouMean(key, names)}` });
      continue;
    }
    if (values.includes(value)) continue;
    // Suggest only among string values: "false" is not a typo of false, it is the wrong type.
    const words = values.filter((v): v is string => typeof v === "string");
    const match = typeof value === "string" ? closestName(value, words) : undefined;
    issues.push({
      path: `baseline.${key}`,
      message: `expected one of ${values.map((v) => JSON.stringify(v)).join(", ")}, got ${JSON.stringify(value)}${match ? ` — did you mean ${JSON.stringify(match)}?` : ""}`,
    });
  }
  return issues;
}

/** The same pair twice in one measure would run twice and be counted twice in the comparisons. */
function duplicatePairs(measure: readonly { pairs?: { from: string; to: string }[] | undefined }[]): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  measure.forEach((m, i) => {
    const seen = new Set<string>();
    m.pairs?.forEach((pair, j) => {
      const id = `${pair.from}->${pair.to}`;
      if (seen.has(id)) issues.push({ path: `measure[${i}].pairs[${j}]`, message: `duplicate pair ${id}` });
      seen.add(id);
    });
  });
  return issues;
}

function paramKeys(schema: z.ZodType): string[] {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

/** Pairs must name declared roles; without pairs, a "server" role is needed. */
export function checkPairs(measure: readonly { pairs?: { from: string; to: string }[] | undefined }[], roles: readonly string[]): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  measure.forEach((m, i) => {
    if (!m.pairs) {
      if (!roles.includes("server")) issues.push({ path: `measure[${i}].pairs`, message: `no pairs given and no host is called "server" (hosts: ${roles.join(", ")})` });
      return;
    }
    m.pairs.forEach((pair, j) => {
      for (const end of ["from", "to"] as const) {
        if (!roles.includes(pair[end])) issues.push({ path: `measure[${i}].pairs[${j}].${end}`, message: `no host "${pair[end]}"${didYouMean(pair[end], roles)}` });
      }
      if (pair.from === pair.to) issues.push({ path: `measure[${i}].pairs[${j}]`, message: "a host cannot measure itself" });
    });
  });
  return issues;
}

export function isExperiment(value: unknown): value is Experiment {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "latlab.experiment";
}
