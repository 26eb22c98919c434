import type { ToolResult } from "../tools/types.ts";
import { Distribution } from "./distribution.ts";
import { SummarySchema, tailSupported, type Summary } from "./summary.ts";

/**
 * The summary of one tool run: from its samples when it gave them, otherwise from the
 * summary the tool printed (a stdout captured by hand), otherwise none.
 */
export function summarize(result: ToolResult): Summary | undefined {
  if (result.samples.length) {
    const distribution = new Distribution(result.metric, result.unit);
    distribution.add(result.samples);
    return distribution.summary();
  }
  // The result's metric and unit are what the samples would have been in; the tool's copy must not override them.
  const fromTool = SummarySchema.safeParse({ ...result.reported, metric: result.metric, unit: result.unit });
  if (!fromTool.success) return undefined;
  const { p9999, p99999, ...summary } = fromTool.data;
  // sockperf prints "percentile 99.990" and "99.999" whatever its count (its parser keeps them as
  // p99_99 and p99_999); like a Distribution's, they are kept only where the count supports them.
  const tail = (key: "p9999" | "p99999", own: number | undefined, printedAs: string): number | undefined => {
    const printed = result.reported?.[printedAs];
    const v = own ?? (typeof printed === "number" && Number.isFinite(printed) ? printed : undefined);
    return tailSupported(summary.count, key) ? v : undefined;
  };
  const t4 = tail("p9999", p9999, "p99_99");
  const t5 = tail("p99999", p99999, "p99_999");
  return { ...summary, ...(t4 === undefined ? {} : { p9999: t4 }), ...(t5 === undefined ? {} : { p99999: t5 }) };
}

/** Merges sample sets (replicas, repetitions) into one summary: histograms, never averages. */
export function summarizeMany(metric: ToolResult["metric"], unit: ToolResult["unit"], sampleSets: readonly number[][]): Summary | undefined {
  const distribution = new Distribution(metric, unit);
  let any = false;
  for (const samples of sampleSets) {
    if (samples.length) {
      distribution.add(samples);
      any = true;
    }
  }
  return any ? distribution.summary() : undefined;
}
