import { LocalTarget } from "./local/localTarget.ts";
import { checkLocalPrerequisites } from "./local/preflight.ts";
import type { Target } from "./target.ts";

export interface PreflightOptions {
  /** Executables the experiment's tools need on every host. */
  binaries: string[];
  /** May the preflight install what is missing (root + apt)? */
  install: boolean;
  log: (message: string) => void;
}

export interface TargetFactory {
  description: string;
  /** Checks (and where allowed, installs) what the target needs; throws with what to do. */
  preflight(options: PreflightOptions): Promise<void>;
  create(): Target;
}

/** Every place hosts can run. Adding a target = its module plus one line here. */
export const targets: Record<string, TargetFactory> = {
  local: {
    description: "network namespaces on this machine (no cloud account needed)",
    async preflight(options) {
      await checkLocalPrerequisites(options);
    },
    create: () => new LocalTarget(),
  },
};

export const TARGET_NAMES = Object.keys(targets);
export const findTarget = (name: string): TargetFactory | undefined => (Object.hasOwn(targets, name) ? targets[name] : undefined);
