/** Signals that stop a run gracefully: Ctrl-C, kill, and a dropped SSH session or terminal. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const satisfies readonly NodeJS.Signals[];
