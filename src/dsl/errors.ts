import type { z } from "zod";
import { didYouMean } from "./suggest.ts";

export interface DefinitionIssue {
  /** Dotted path into the definition, e.g. `axes.ppg[1]`. */
  path: string;
  message: string;
}

/** A wrong experiment definition. Thrown before anything is created. */
export class ExperimentDefinitionError extends Error {
  readonly issues: DefinitionIssue[];
  readonly experiment: string | undefined;
  readonly source: string | undefined;

  constructor(issues: DefinitionIssue[], experiment?: string, source?: string) {
    super(formatIssues(issues, experiment, source));
    this.name = "ExperimentDefinitionError";
    this.issues = issues;
    this.experiment = experiment;
    this.source = source;
  }

  /** The same error, now knowing which file it came from. */
  withSource(source: string): ExperimentDefinitionError {
    return new ExperimentDefinitionError(this.issues, this.experiment, source);
  }
}

function formatIssues(issues: DefinitionIssue[], experiment?: string, source?: string): string {
  const where = [source, experiment ? `experiment "${experiment}"` : undefined].filter(Boolean).join(": ");
  const head = where ? `${where}: invalid definition` : "invalid experiment definition";
  return [head, ...issues.map((i) => `  ${i.path || "(top level)"}: ${i.message}`)].join("\n");
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "function") return "a function";
  try {
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return typeof value;
  }
}

/**
 * zod issues as short sentences that name the field and what was found there. Unknown keys
 * get a "did you mean" when `knownKeys` can tell what the object accepts.
 */
export function issuesFromZod(
  error: z.ZodError,
  prefix: readonly PropertyKey[] = [],
  knownKeys?: (path: readonly PropertyKey[]) => readonly string[] | undefined,
): DefinitionIssue[] {
  const out: DefinitionIssue[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path];
    switch (issue.code) {
      case "invalid_type":
        out.push({ path: formatPath(path), message: `expected ${issue.expected}, got ${describeValue(issue.input)}` });
        break;
      case "unrecognized_keys": {
        const known = knownKeys?.(path) ?? [];
        for (const key of issue.keys) {
          out.push({ path: formatPath([...path, key]), message: `unknown field "${key}"${known.length ? didYouMean(key, known) : ""}` });
        }
        break;
      }
      case "invalid_value":
        out.push({
          path: formatPath(path),
          message: `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, got ${describeValue(issue.input)}${
            typeof issue.input === "string" ? didYouMean(issue.input, issue.values.map(String)).replace(/ \(known:.*\)$/, "") : ""
          }`,
        });
        break;
      case "invalid_key":
        // zod's own text ("Invalid key in record") says nothing about what a key must look like.
        out.push({ path: formatPath(path), message: `${issue.issues.map((i) => i.message).join("; ")}, got ${describeValue(issue.input)}` });
        break;
      default:
        out.push({ path: formatPath(path), message: `${issue.message}${"input" in issue && issue.input !== undefined ? `, got ${describeValue(issue.input)}` : ""}` });
    }
  }
  return out;
}
