// The one Node API node.ts uses (the package has no @types/node dependency).
declare module 'node:fs/promises' {
  export function readFile(path: URL): Promise<Uint8Array>;
}
