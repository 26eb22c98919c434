/**
 * Where a run was made from, recorded in results.json's environment facts and so in the
 * history: the commit of the project (a trend is read against the changes that made it) and,
 * in GitHub Actions, the workflow run (the scheduled workflow finds the previous run's
 * artifact by it).
 */
import { spawnSync } from "node:child_process";
import { GIT_COMMIT_FACT } from "../../history/historyRecords.ts";

const git = (cwd: string, args: string[]) => {
  const r = spawnSync("git", args, { cwd, encoding: "utf8", timeout: 10_000 });
  return r.status === 0 ? r.stdout.trim() : undefined;
};

/** GitHub Actions' default variables recorded, under `github.<name>`. */
const GITHUB_VARIABLES: Record<string, string> = {
  repository: "GITHUB_REPOSITORY",
  runId: "GITHUB_RUN_ID",
  runAttempt: "GITHUB_RUN_ATTEMPT",
  workflow: "GITHUB_WORKFLOW",
  event: "GITHUB_EVENT_NAME",
  ref: "GITHUB_REF",
  sha: "GITHUB_SHA",
};

export function provenanceFacts(cwd: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const facts: Record<string, string> = {};
  const commit = git(cwd, ["rev-parse", "HEAD"]);
  if (commit) {
    const status = git(cwd, ["status", "--porcelain", "--untracked-files=no"]);
    // A status git could not give is not "clean".
    facts[GIT_COMMIT_FACT] = status === undefined ? `${commit}-status-unknown` : status ? `${commit}-dirty` : commit;
  }
  if (env.GITHUB_ACTIONS === "true") {
    for (const [name, variable] of Object.entries(GITHUB_VARIABLES)) {
      const value = env[variable];
      if (value) facts[`github.${name}`] = value;
    }
  }
  return facts;
}
