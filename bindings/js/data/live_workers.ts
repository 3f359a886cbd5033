// Internal: how many DataLoader workers are running. workers.ts (imported on the first
// iteration with numWorkers > 0) counts them here, so that DataLoader.liveWorkers() reads the
// count without loading workers.ts.

/** Workers started and not yet exited (Node: until their 'exit' event). */
let live = 0;

/** How many DataLoader workers are running now (for tests: 0 once iterations have ended). @internal */
export function liveWorkers(): number {
  return live;
}

/** A worker started (+1) or exited (-1). @internal */
export function countWorker(delta: 1 | -1): void {
  live += delta;
}
