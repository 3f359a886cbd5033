// dist/kiln-mt-worker-source.js (written by scripts/build.sh): the text of Emscripten's
// pthread worker script, for tsc.
declare const workerSource: string;
export default workerSource;
