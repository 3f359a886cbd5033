// Helper of module_torch_gen.py (not a test): prints, as JSON, the SafeTensors bytes
// (base64) that a Kiln user module (the MLP of module_torch_gen.py: fc1, fc2 built-in
// linear layers and a JS Param `scale`) writes with the fixture's initial values, in
// float32, float16 and bfloat16. The generator loads each into torch strictly.
import { readFileSync } from 'node:fs';
import { init } from 'kiln-dl';
import { Mlp, stateFromFixture } from './support/module_helpers.mjs';

const fixture = JSON.parse(readFileSync(new URL('./module_torch_fixture.json', import.meta.url), 'utf8'));
const kiln = await init();
const net = new (Mlp(kiln))();
kiln.tidy(() => net.loadStateDict(stateFromFixture(kiln, fixture.init, fixture.shapes)));
const out = {};
for (const dtype of ['float32', 'float16', 'bfloat16']) {
  out[dtype] = Buffer.from(net.saveSafetensors({ dtype })).toString('base64');
}
process.stdout.write(JSON.stringify(out));
