import type { ToolResult } from "../tools/types.ts";
import { Distribution } from "./distribution.ts";
import { SummarySchema, type Summary } from "./summary.ts";

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
  return fromTool.success ? fromTool.data : undefined;
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
