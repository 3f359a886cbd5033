// The notebook runtime (DOM-free): the cell evaluator, the output model, mnist.load, asset
// and files, and the Markdown loader. Used by the page's worker (web/src/tutorial/worker.js),
// the page (Markdown at build time) and the Node runner (tests/js/support/notebook_node.mjs).
export { compileCell, transformCell, errorLocation, calibrate, CellSyntaxError, SCOPE, userMessage } from './evaluator.js';
export { formatValue, formatLine, tableOf, errorText, truncatedText, eventLines, outputText, isTensor } from './format.js';
export { Notebook, errorEvent, OUTPUT_LIMIT } from './notebook.js';
export { createMnist } from './mnist.js';
export { createAsset, addFile, ASSET_NAME } from './assets.js';
