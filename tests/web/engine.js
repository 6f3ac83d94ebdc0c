// Runs one request through the WebAssembly engine under Node.js, as the page's
// worker does, and prints the answer (progress messages go to stderr):
//   node --no-experimental-fetch tests/web/engine.js build-web/seqgrad-engine.js '{"cmd": "bench"}'
// (Node 18 and later need --no-experimental-fetch for emscripten 3.1's loader.)
'use strict';
const [enginePath, request] = process.argv.slice(2);
if (!enginePath || !request) {
  console.error('usage: node tests/web/engine.js ENGINE.js REQUEST_JSON');
  process.exit(2);
}
globalThis.Module = {
  onPost: (text) => process.stderr.write(text.slice(0, 200) + '\n'),
  onRuntimeInitialized: () => {
    const answer = globalThis.Module.ccall('seqgrad_call', 'string', ['string'], [request]);
    process.stdout.write(answer + '\n');
    process.exit(JSON.parse(answer).error ? 1 : 0);
  },
};
// Run as a classic script, as in the worker, so that it finds the Module above.
globalThis.require = require;
globalThis.__dirname = __dirname;
require('vm').runInThisContext(require('fs').readFileSync(enginePath, 'utf8'), { filename: enginePath });
