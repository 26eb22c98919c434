import type { Experiment } from "../../dsl/experiment.ts";
import type { PlanOptions } from "../../plan/buildPlan.ts";
import { checkExperiment, confirmText, refusalText } from "../../plan/planGuards.ts";

/** Measurement time per tool run of a rehearsal without --duration. */
export const REHEARSAL_SECONDS = 1;

/**
 * The plan guard (src/plan/planGuards.ts), before anything is built: throws for a plan past the
 * refuse limits; returns the numbers of one past the confirm limits (`run` then needs --yes).
 */
export function guardPlanSize(experiment: Experiment, options: PlanOptions): string | undefined {
  const check = checkExperiment(experiment, options);
  if (check.refused.length) throw new Error(refusalText(experiment.name, check));
  return check.confirm.length ? confirmText(experiment.name, check) : undefined;
}
