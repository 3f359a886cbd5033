// Internal, Node only: the deferred module of a split engine read from the file beside the
// package's entry (deferred.ts explains the split).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { DeferredSource } from './deferred.js';

/** A DeferredSource for Node: the file at the file: URL `url`. */
export function fileSource(url: URL): DeferredSource {
  const path = fileURLToPath(url);
  return {
    file: path.slice(path.lastIndexOf('/') + 1),
    readSync: () => readFileSync(path),
    read: async () => readFile(path),
  };
}
