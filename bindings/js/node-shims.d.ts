// The Node APIs node.ts and deferred_node.ts use (the package has no @types/node dependency).
declare module 'node:fs/promises' {
  export function readFile(path: URL | string): Promise<Uint8Array>;
}
declare module 'node:fs' {
  export function readFileSync(path: string): Uint8Array;
}
declare module 'node:url' {
  export function fileURLToPath(url: URL): string;
}
