import type { PlanOptions } from "../plan/buildPlan.ts";
import type { Plan } from "../plan/types.ts";
import type { TeardownReport } from "../results/schema.ts";
import type { Target } from "./target.ts";

/** What the CLI passes a target, from its flags. Targets read what concerns them. */
export interface TargetOptions {
  /** Executables the experiment's tools need on every host. */
  binaries: string[];
  /** May latlab install what is missing (system packages locally, the Pulumi CLI for Azure)? */
  install: boolean;
  log: (message: string) => void;
  /** The experiment file, so a target can list it in a separate process. */
  source: string;
  /** Azure: may latlab install the Pulumi CLI when it is missing (opt-in)? */
  installPulumi?: boolean;
  /** Azure: CIDR the runner's SSH comes from. */
  sshFrom?: string;
  /** Azure: Pulumi backend URL (default: a file backend in the run folder). */
  backend?: string;
  /** Azure: deploy without asking. */
  yes?: boolean;
  /** Azure: refuse to deploy above this estimated cost (USD). */
  maxCost?: number;
  /** Azure: refresh prices from the Retail Prices API. */
  livePrices?: boolean;
  /** Azure: rehearse against latlab's emulator on this machine (no account, no cost). */
  rehearse?: boolean;
  /** The --duration the run was planned with (a listing in another process must match it). */
  duration?: PlanOptions["duration"];
  /**
   * Azure rehearsal: the plan of the real run it stands for — the user's own --duration, where the
   * rehearsal measures a second per tool run. Its budget check (--max-cost) is the real run's.
   */
  realPlan?: Plan;
  /** The --replicas the run was planned with (likewise). */
  replicas?: number;
  /** Folder run folders are kept in (for printed follow-up commands). */
  resultsRoot: string;
  /** Azure: the cost line the preflight computed (the whole run, every wave), shown again at the confirmation. */
  costSummary?: string;
  /** Azure: the cost line of part of the run (a wave's plan), at the preflight's prices: each wave's confirmation shows its own. */
  costOf?: (plan: Plan) => string;
  /** Azure: the subscription the preflight settled on; the target deploys and tears down there. */
  subscriptionId?: string;
}

export interface TargetFactory {
  description: string;
  /** Checks (and where allowed, installs) what the target needs; throws saying what to do. */
  preflight(plan: Plan, options: TargetOptions): Promise<void>;
  create(options: TargetOptions): Promise<Target>;
  /**
   * What `latlab plan` says for this target, offline: what it would refuse (thrown, naming the
   * variant and host) and notes a reader of the plan must see (e.g. sizes it cannot cap).
   */
  planNotes?(plan: Plan): Promise<string[]>;
  /**
   * `latlab cleanup`: removes what runs of this target whose runner died left on this machine
   * (listing each item; only listing with dryRun), never touching a live run. `failed`: something
   * could not be removed.
   */
  cleanup?(options: { dryRun: boolean; unrecorded: boolean; log: (message: string) => void }): Promise<{ text: string; failed: boolean }>;
  /**
   * `latlab resume`: throws, saying why and what to do, when a run of this target cannot be
   * resumed here (its runner alive, its hosts still up, a target that cannot resume). Absent: the
   * target cannot resume runs.
   */
  checkResume?(runId: string, runDir: string): Promise<void>;
  /**
   * `latlab resume`: a target holding the hosts the run (or a dead resume of it) left up when its
   * runner died — up() gives them instead of new ones, down() removes them — so the run goes on
   * on the same hosts and a detached client still running there is collected. Null when nothing
   * of the run is up; throws, saying what to do, when hosts are left that cannot be re-attached to.
   */
  reattach?(runId: string, runDir: string, plan: Plan, options: TargetOptions): Promise<Target | null>;
  /**
   * `latlab resume` finishing a run killed in its teardown whose hosts cannot be re-attached to
   * (part of them removed already): removes what is left of that run (or a resume of it) — never
   * another run's — logging each item, as the run's teardown would have (its report). Absent: the
   * target's own way (e.g. `latlab destroy`) is named instead.
   */
  cleanupRun?(runId: string, runDir: string, options: { log: (message: string) => void }): Promise<TeardownReport>;
}

/**
 * Every place hosts can run. Adding a target = its module plus one entry here. Modules load
 * lazily: a local run never loads Pulumi.
 */
export const targets: Record<string, TargetFactory> = {
  local: {
    description: "network namespaces on this machine (no cloud account needed)",
    async preflight(plan, options) {
      const { checkLocalPrerequisites } = await import("./local/preflight.ts");
      await checkLocalPrerequisites({ plan, binaries: options.binaries, install: options.install, log: options.log });
    },
    async create() {
      const { LocalTarget } = await import("./local/localTarget.ts");
      return new LocalTarget();
    },
    async planNotes(plan) {
      const { assertLocalPlan, uncappedLine } = await import("./local/planCheck.ts");
      const { modelledCrossRegionPairs } = await import("./local/model/regionLatencyPlan.ts");
      const { formatModelledPairs } = await import("../report/planText.ts");
      assertLocalPlan(plan);
      const uncapped = uncappedLine(plan);
      return [...(uncapped ? [uncapped] : []), ...formatModelledPairs(modelledCrossRegionPairs(plan))];
    },
    async cleanup(options) {
      const { cleanupLocal, formatCleanup } = await import("./local/recovery/cleanup.ts");
      const report = await cleanupLocal(options);
      return { text: formatCleanup(report, options), failed: report.errors.length > 0 };
    },
    async checkResume(runId, runDir) {
      const { refuseLiveRun } = await import("./local/recovery/reattach.ts");
      const { RESUME_FOLDER } = await import("../runner/resumeRun.ts");
      await refuseLiveRun(runId, runDir, RESUME_FOLDER);
    },
    async reattach(runId, runDir, plan, options) {
      const { reattachLocal } = await import("./local/recovery/reattach.ts");
      const { RESUME_FOLDER } = await import("../runner/resumeRun.ts");
      return reattachLocal(runId, runDir, RESUME_FOLDER, plan, { log: options.log });
    },
    async cleanupRun(runId, runDir, options) {
      const { cleanupLocalRun } = await import("./local/recovery/cleanupRun.ts");
      const { RESUME_FOLDER } = await import("../runner/resumeRun.ts");
      return cleanupLocalRun(runId, runDir, RESUME_FOLDER, { log: options.log });
    },
  },
  azure: {
    description: "Azure VMs through Pulumi (costs money; needs the Pulumi CLI and Azure credentials)",
    async preflight(plan, options) {
      const { azurePreflight } = await import("./azure/lifecycle/preflight.ts");
      await azurePreflight(plan, options);
    },
    async create(options) {
      const { createAzureTarget } = await import("./azure/lifecycle/preflight.ts");
      return createAzureTarget(options);
    },
  },
};

export const TARGET_NAMES = Object.keys(targets);
export const findTarget = (name: string): TargetFactory | undefined => (Object.hasOwn(targets, name) ? targets[name] : undefined);
