import { ExperimentDefinitionError, type DefinitionIssue } from "../../dsl/errors.ts";
import { checkPairs, type Experiment } from "../../dsl/experiment.ts";
import { expandMatrix, variantId, type AxisTable } from "../../dsl/matrix.ts";
import { didYouMean } from "../../dsl/suggest.ts";
import { axisCombinations, PLAN_LIMITS } from "../../plan/planGuards.ts";
import { resolveHosts } from "../../plan/resolveHosts.ts";
import { TARGET_NAMES } from "../../targets/registry.ts";

/**
 * Variants checked host by host at load time. Past this the axes are a plan the size guard
 * refuses anyway (src/plan/planGuards.ts); expanding them here would be the very cost it avoids.
 */
const MAX_CHECKED_VARIANTS = PLAN_LIMITS.refuse.cells;
/** Issues shown at most: a hosts function wrong in every variant says so once per variant. */
const MAX_ISSUES = 12;

/**
 * What defineExperiment cannot check on its own, checked while the loader knows the file, so
 * that these errors name the file and the field like every other definition error:
 *
 * - `durationByTarget` keys must be targets (the DSL stays free of the target registry);
 * - each variant's hosts: a hosts function that throws or returns wrong hosts, a host field
 *   contradicting the placement (resolveHosts), a measure without pairs in a variant with no
 *   "server" (checkPairs) — what buildPlan would otherwise refuse without naming the file.
 *
 * Only variants are resolved, never cells: replicas and repetitions multiply nothing here.
 */
export function checkLoaded(experiment: Experiment, file: string): void {
  const issues: DefinitionIssue[] = Object.keys(experiment.durationByTarget)
    .filter((key) => !TARGET_NAMES.includes(key))
    .map((key) => ({ path: `durationByTarget.${key}`, message: `"${key}" is not a target${didYouMean(key, TARGET_NAMES)}` }));

  const axes = experiment.axes as AxisTable;
  if (axisCombinations(axes, experiment.zip) <= MAX_CHECKED_VARIANTS) {
    // defineExperiment refused any issue of the matrix itself; none is expected here.
    const { points, issues: matrixIssues } = expandMatrix(axes, experiment.zip, experiment.filter);
    issues.push(...matrixIssues);
    for (const point of matrixIssues.length ? [] : points) {
      const variant = variantId(point);
      try {
        const roles = resolveHosts(experiment, point, variant).map((h) => h.role);
        issues.push(...checkPairs(experiment.measure, roles).map((i) => ({ ...i, message: `${i.message} (variant ${variant})` })));
      } catch (error) {
        if (!(error instanceof ExperimentDefinitionError)) throw new Error(`${file}: experiment "${experiment.name}": ${(error as Error).message}`, { cause: error });
        issues.push(...error.issues);
      }
      if (issues.length > MAX_ISSUES) break;
    }
  }
  if (!issues.length) return;
  const shown = issues.slice(0, MAX_ISSUES);
  if (issues.length > MAX_ISSUES) shown.push({ path: "", message: "(more issues left out; fix these first)" });
  throw new ExperimentDefinitionError(shown, experiment.name, file);
}

