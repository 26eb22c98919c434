/**
 * `latlab init [dir]`: a new experiments project, with latlab's GitHub workflows.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { scaffold } from "../init/scaffold.ts";

export function registerInitCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("init")
    .description("make a new experiments project: package.json, tsconfig.json, experiments/example.ts, .gitignore, README.md, and latlab's GitHub workflows in .github/workflows/ (scheduled.yml, latlab-measure.yml, latlab-history.yml, latlab-sweep.yml)")
    .argument("[dir]", "where (made if missing)", ".")
    .option("--force", "overwrite files that exist")
    .action(async (dir: string, opts: { force?: boolean }) => {
      const result = await scaffold(dir, { force: Boolean(opts.force) });
      if (!result.written.length) {
        process.stderr.write(`latlab init: these files exist in ${result.dir}; nothing was written (--force overwrites them):\n${result.existing.map((f) => `  ${f}\n`).join("")}`);
        setExitCode(1);
        return;
      }
      const overwritten = new Set(result.existing);
      process.stdout.write(`wrote in ${result.dir}:\n${result.written.map((f) => `  ${f}${overwritten.has(f) ? " (overwritten)" : ""}\n`).join("")}`);
      const cd = resolve(dir) === process.cwd() ? "" : `cd ${/^[\w./-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", "'\\''")}'`} && `;
      // Not on the npm registry yet: `npm install` alone would find no latlab (or somebody else's).
      process.stdout.write(
        `next:\n  ${cd}npm install /path/to/latlab-<version>.tgz   # \`npm pack\` in a latlab clone makes it\n  npx latlab run example                       # as root: emulated hosts are network namespaces\n` +
          "  .github/workflows/scheduled.yml runs the experiments weekly on Azure: see latlab's README, \"Scheduled runs in GitHub Actions\"\n",
      );
    });
}
