// A TypeScript consumer of kiln-dl's modules (kiln.Module, kiln.Param, optimizer.step on
// any module or tensor list): must type-check with `tsc --noEmit --strict`
// (tests/js/module_types.test.mjs). The @ts-expect-error lines must stay errors.
import { init } from 'kiln-dl';
import type { Gradients, Kiln, Layer, LoadReport, Module, Param, Sequential, Tensor } from 'kiln-dl';

export async function main(): Promise<number> {
  const kiln: Kiln = await init();

  class Net extends kiln.Module {
    fc1: Layer;
    body: Sequential;
    w: Param;
    blocks: Layer[];
    constructor() {
      super();
      this.fc1 = kiln.nn.linear({ dInput: 4, dOutput: 3 });
      this.body = kiln.nn.sequential([{ type: 'relu' }]);
      this.w = this.param('w', kiln.Tensor.ones([3, 2]));
      this.blocks = [kiln.nn.linear({ dInput: 2, dOutput: 2 })];
    }

    forward(x: Tensor): Tensor {
      return this.body.forward(this.fc1.forward(x)).matmul(this.w);
    }
  }

  const net = new Net();
  const x = kiln.Tensor.ones([1, 4]);
  const y: Tensor = net.call(x);
  const asModule: Module = net;
  const layerIsModule: Module = net.fc1;
  const named: Record<string, Tensor> = net.namedParameters();
  const list: Tensor[] = net.parameters();
  const n: number = net.numParams;
  const sd: Record<string, Tensor> = net.stateDict();
  const report: LoadReport = net.loadStateDict(sd, { strict: false });
  const remapped: LoadReport = net.loadStateDict(sd, {
    remap: [[/^model\./, ''], ['^body\\.', 'layers.']],
    allowPartial: true,
    adapter: { from: 'burn', linearWeights: [/^fc\d\.weight$/] },
  });
  const pairs: [string, string][] = remapped.remapped;
  const applied: string[] = remapped.applied.concat(remapped.transposed);
  void pairs;
  void applied;
  const missing: string[] = report.missing;
  const bytes: Uint8Array = net.saveSafetensors({ dtype: 'bfloat16' });
  net.loadSafetensors(bytes, { strict: true }).train().eval();
  const training: boolean = net.training;
  const copy: Net = net.clone();
  copy.requiresGrad(false);
  const p: Param = new kiln.Param(kiln.Tensor.zeros([2]), { requiresGrad: true });
  p.requiresGrad = false;
  const id: number = p.paramId;
  const t: Tensor = p; // a Param is a Tensor
  p.assign(kiln.Tensor.ones([2]));
  const text: string = net.toString();
  const children: [string, Module][] = net.namedChildren();
  const mixed: Module = kiln.nn.sequential([net, { type: 'relu' }]);
  const seq: Sequential = kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 2 }]);
  const half: Uint8Array = seq.saveSafetensors({ dtype: 'float16' });
  seq.loadSafetensors(half, { strict: false });
  const seqCopy: Sequential = seq.clone();

  const opt = kiln.optim.adam({ lr: 0.01 });
  const grads: Gradients = y.sum().backward();
  opt.step(net, grads);
  opt.step(seq, grads);
  opt.step([p, t], grads);

  // @ts-expect-error a number is not a module or a list of tensors
  opt.step(3, grads);
  // @ts-expect-error the dtype option is a closed set
  net.saveSafetensors({ dtype: 'float64' });
  // @ts-expect-error a Param is made from a Tensor
  new kiln.Param([1, 2]);
  // @ts-expect-error paramId is read-only
  p.paramId = 3;

  void [asModule, layerIsModule, named, list, sd, missing, training, id, text, children, mixed, seqCopy];
  copy.dispose();
  net.dispose();
  return n;
}
