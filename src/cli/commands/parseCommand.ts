/**
 * `latlab parse <tool> <file>`: a capture made by hand, normalised as a run's would be, to compare
 * old measurements with new runs.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { issuesFromZod } from "../../dsl/errors.ts";
import { didYouMean } from "../../dsl/suggest.ts";
import { summarize } from "../../results/summarize.ts";
import { TOOL_NAMES, findTool } from "../../tools/registry.ts";
import { aboutCapture, readCapture } from "../input/readInput.ts";
import { sanitizeForTerminal } from "../output/terminalText.ts";

export function registerParseCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("parse")
    .description("normalise an output captured by hand (RTT in µs), to compare old measurements with new runs")
    .argument("<tool>", `one of ${TOOL_NAMES.join(", ")}`)
    .argument("<file>", "the tool's captured stdout (stderr may be appended)")
    .option("--file <path...>", "extra files the tool wrote (e.g. sockperf --full-log)")
    .option("--params <json>", "the tool parameters the capture was made with, e.g. '{\"parallel\": 4}' (default: the tool's defaults)")
    .option("--json", "print JSON")
    .action((toolName: string, file: string, opts: { file?: string[]; json?: boolean; params?: string }) => {
      const tool = findTool(toolName);
      if (!tool) throw new Error(`unknown tool "${toolName}"${didYouMean(toolName, TOOL_NAMES)}`);
      const text = readCapture(file);
      const files = Object.fromEntries((opts.file ?? []).map((f) => [f, readCapture(f, "--file")]));
      let given: unknown = {};
      if (opts.params) {
        try {
          given = JSON.parse(opts.params);
        } catch {
          throw new Error(`--params: not JSON: ${opts.params}`);
        }
      }
      const parsedParams = tool.params.safeParse(given, { reportInput: true });
      if (!parsedParams.success) throw new Error(`--params: ${issuesFromZod(parsedParams.error).map((i) => `${i.path}: ${i.message}`).join("; ")}`);
      const params = parsedParams.data;
      const result = aboutCapture(file, () => tool.parse({ stdout: text, stderr: "", exitCode: 0, files }, params));
      const summary = summarize(result);
      const out = { tool: tool.name, file: resolve(file), summary, reported: result.reported, warnings: result.warnings, samples: result.samples.length };
      if (opts.json) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      else {
        const s = summary;
        process.stdout.write(
          s
            ? `${tool.name} ${s.metric} (${s.unit}): n=${s.count} mean=${s.mean.toFixed(2)} p50=${s.p50.toFixed(2)} p90=${s.p90.toFixed(2)} p99=${s.p99.toFixed(2)} p99.9=${s.p999.toFixed(2)} min=${s.min.toFixed(2)} max=${s.max.toFixed(2)} stddev=${s.stddev.toFixed(2)}\n`
            : `${tool.name}: no summary could be made\n`,
        );
        for (const w of result.warnings) process.stdout.write(`warning: ${w}\n`);
      }
      // A capture with nothing to summarise is not a measurement: scripts that parse a folder of
      // old captures must see which ones gave nothing, whatever the tool.
      if (!summary) {
        process.stderr.write(sanitizeForTerminal(`latlab parse: ${resolve(file)} holds no ${tool.name} measurement (no samples, and no summary printed by the tool)${result.warnings.length ? `; its ${result.warnings.length === 1 ? "warning says" : "warnings say"} why` : ""}`) + "\n");
        setExitCode(1);
      }
    });
}
