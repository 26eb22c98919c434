import { z } from "zod";
import { NetworkPathSchema } from "../plan/types.ts";
import { TOOL_NAMES, findTool, type ToolName, type tools } from "../tools/registry.ts";
import { AXIS_NAMES, AxesSchema, type Axes, type AxisValues } from "./axes.ts";
import { ExperimentDefinitionError, issuesFromZod, type DefinitionIssue } from "./errors.ts";
import { baselineMap, expandMatrix } from "./matrix.ts";
import { HostSpecSchema, RegionSchema, type HostSpec } from "./placement.ts";
import { didYouMean } from "./suggest.ts";

const RoleSchema = z.string().regex(/^[a-z][a-z0-9]{0,11}$/, "a role is lower case letters and digits, at most 12, starting with a letter");

const PairSchema = z.object({ from: RoleSchema, to: RoleSchema }).strict();

const MeasureShapeSchema = z
  .object({
    tool: z.string(),
    params: z.record(z.string(), z.unknown()).optional(),
    /** Which host pairs this tool measures; default every role to "server". */
    pairs: z.array(PairSchema).min(1).optional(),
    /** Private (VNet) or public path; default from the `path` axis, else private. */
    path: NetworkPathSchema.optional(),
  })
  .strict();

const HostsObjectSchema = z.record(RoleSchema, HostSpecSchema);

const isFunction = (v: unknown): v is (...args: never[]) => unknown => typeof v === "function";

export const ExperimentShapeSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9-]*$/, "a name is lower case letters, digits and '-'"),
    description: z.string().min(1),
    /** The field reports or posts this experiment reproduces. */
    reproduces: z.array(z.string()).default([]),
    /** Placement for every host unless a host or an axis says otherwise. */
    defaults: HostSpecSchema.default({}),
    /** Where `placement: "cross-region"` puts the non-anchor hosts. */
    peerRegion: RegionSchema.default("ukwest"),
    axes: AxesSchema.default({}),
    zip: z.array(z.array(z.string()).min(2)).default([]),
    filter: z.custom<(v: Record<string, unknown>) => boolean>(isFunction, { message: "expected a function (variant) => boolean" }).optional(),
    hosts: z.union([HostsObjectSchema, z.custom<(v: Record<string, unknown>) => unknown>(isFunction)]),
    measure: z.array(MeasureShapeSchema).min(1),
    /**
     * Measurement seconds per tool run on a given target when --duration is not given
     * (seed 000 ran 11 h on Azure; the same experiment runs for seconds on the local target).
     */
    durationByTarget: z.record(z.string(), z.number().positive()).default({}),
    replicas: z.number().int().min(1).default(1),
    repetitions: z.number().int().min(1).default(1),
    /**
   * Axis values naming the variant the others are compared with (default the first). Naming
   * only some axes compares each variant with its sibling that differs only in those.
   */
    baseline: z.record(z.string(), z.union([z.string(), z.boolean(), z.number()])).optional(),
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
  defaults?: HostSpec;
  peerRegion?: string;
  axes?: A;
  zip?: (keyof A & string)[][];
  filter?: (variant: AxisValues<A>) => boolean;
  hosts: HostsSpec | ((variant: AxisValues<A>) => HostsSpec);
  measure: MeasureSpec[];
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

/**
 * Declares an experiment. Validates everything that can be checked without bringing anything
 * up — fields, axis values, tool names and parameters, the matrix, the baseline — and throws
 * ExperimentDefinitionError naming each wrong field.
 */
export function defineExperiment<const A extends Axes>(input: ExperimentInput<A>): Experiment {
  const parsed = ExperimentShapeSchema.safeParse(input, { reportInput: true });
  const name = typeof (input as { name?: unknown })?.name === "string" ? (input as { name: string }).name : undefined;
  if (!parsed.success) throw new ExperimentDefinitionError(issuesFromZod(parsed.error, [], knownKeysAt), name);
  const def = parsed.data;
  const issues: DefinitionIssue[] = [];

  const measure = def.measure.map((m, i) => {
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

  const { points, issues: matrixIssues } = expandMatrix(def.axes as Record<string, readonly (string | boolean)[]>, def.zip, def.filter);
  issues.push(...matrixIssues);

  if (def.baseline && points.length) {
    const unknown = Object.keys(def.baseline).filter((key) => !(key in def.axes));
    for (const key of unknown) issues.push({ path: `baseline.${key}`, message: `"${key}" is not one of the declared axes${didYouMean(key, Object.keys(def.axes))}` });
    if (!unknown.length) issues.push(...baselineMap(points, def.baseline).issues);
  }

  if (typeof def.hosts === "object") {
    const roles = Object.keys(def.hosts);
    if (roles.length < 2) issues.push({ path: "hosts", message: `an experiment needs at least two hosts, got ${roles.length}` });
    issues.push(...checkPairs(def.measure, roles));
  }

  if (issues.length) throw new ExperimentDefinitionError(issues, def.name);
  return { ...def, measure, kind: "latlab.experiment" } as Experiment;
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
