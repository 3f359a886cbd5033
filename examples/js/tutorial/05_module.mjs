// Step 5 of the tutorial: your first module — a multi-layer perceptron.
//
//   node examples/js/tutorial/05_module.mjs
//
// Burn: a struct with #[derive(Module)] holding sub-modules, a companion #[derive(Config)]
// with `init(&device)`, and a `forward` method. Kiln's C++ API keeps the struct, with one
// registration line (KILN_MODULE) in place of the derive. In kiln-dl a module is a class
// extending kiln.Module (PyTorch's nn.Module): assign layers and parameters in the
// constructor — they register by assignment, named by their fields ("linear1.weight") —
// and write `forward`. Built-in layers from kiln.nn are Modules too.
//
//   // Burn                                     // Kiln C++
//   #[derive(Module, Debug)]                    template <Backend B> struct Mlp {
//   pub struct Mlp<B: Backend> {                  nn::Linear<B> linear1, linear2;
//       linear1: Linear<B>,                       nn::Relu activation;
//       linear2: Linear<B>,                       Tensor<B, 2> forward(Tensor<B, 2> x) const {
//       activation: Relu,                           return linear2.forward(activation.forward(linear1.forward(x)));
//   }                                             }
//                                               };
import { init } from 'kiln-dl';

const kiln = await init();
const { Tensor } = kiln;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);

// The config: a plain object with defaults, and an init function building the module.
function mlpConfig({ inputDim, hiddenDim, outputDim }) {
  return { inputDim, hiddenDim, outputDim };
}

class Mlp extends kiln.Module {
  constructor({ inputDim, hiddenDim, outputDim }) {
    super();
    this.linear1 = kiln.nn.linear({ dInput: inputDim, dOutput: hiddenDim });
    this.activation = kiln.nn.relu();
    this.linear2 = kiln.nn.linear({ dInput: hiddenDim, dOutput: outputDim });
  }

  /** [batch, inputDim] -> [batch, outputDim] */
  forward(x) {
    const h = this.activation.forward(this.linear1.forward(x));   // [batch, hidden]
    return this.linear2.forward(h);                                // [batch, output]
  }
}

kiln.seed(7);
const model = new Mlp(mlpConfig({ inputDim: 4, hiddenDim: 32, outputDim: 2 }));
console.log(model.toString());
// namedParameters() returns new tensor handles (dispose them, or read them inside kiln.tidy).
show('names', kiln.tidy(() => Object.keys(model.namedParameters())));
show('numParams', model.numParams);                          // 4*32 + 32 + 32*2 + 2
kiln.tidy(() => {
  const input = Tensor.random([8, 4], { normal: [0, 1] });
  const output = model.forward(input);
  show('output.shape', output.shape);
  console.log(output.toString({ precision: 4 }));

  // The forward pass is plain tensor code: check it against the same maths written out
  // with the module's own parameters (PyTorch's Linear: y = x W^T + b).
  const p = model.namedParameters();
  const byHand = input.matmul(p['linear1.weight'].transpose()).add(p['linear1.bias']).relu()
    .matmul(p['linear2.weight'].transpose()).add(p['linear2.bias']);
  show('forwardMatchesByHand', output.sub(byHand).abs().max().item() < 1e-5);
  for (const t of Object.values(p)) t.dispose();
});

// A module can also hold its own parameters: kiln.Param (a tracked tensor) via this.param.
class Affine extends kiln.Module {
  constructor(n) {
    super();
    // A Param copies its initial value; tidy frees the temporaries ones/zeros.
    kiln.tidy(() => {
      this.scale = this.param('scale', Tensor.ones([n]));
      this.shift = this.param('shift', Tensor.zeros([n]));
    });
  }
  forward(x) {
    return x.mul(this.scale).add(this.shift);
  }
}
const affine = new Affine(3);
show('affine.names', kiln.tidy(() => Object.keys(affine.namedParameters())));
kiln.tidy(() => {
  const y = affine.forward(Tensor.fromData([[1, 2, 3]]));
  const grads = y.sum().backward();
  show('affine.dScale', Array.from(affine.scale.grad(grads).dataSync()));   // = x
  grads.dispose();
});

// A module without forward tells you so when called.
class Empty extends kiln.Module {}
try {
  kiln.tidy(() => new Empty().forward(Tensor.zeros([1, 1])));
} catch (e) {
  show('noForward.code', e.code);
}

// ---- Exercise 5 ----
// A 3-layer MLP: 10 -> 64 (ReLU) -> 32 (ReLU) -> 3 logits; a random [16, 10] batch gives [16, 3].
class Mlp3 extends kiln.Module {
  constructor() {
    super();
    this.fc1 = kiln.nn.linear({ dInput: 10, dOutput: 64 });
    this.fc2 = kiln.nn.linear({ dInput: 64, dOutput: 32 });
    this.fc3 = kiln.nn.linear({ dInput: 32, dOutput: 3 });
  }
  forward(x) {
    return this.fc3.forward(this.fc2.forward(this.fc1.forward(x).relu()).relu());
  }
}
const mlp3 = new Mlp3();
kiln.tidy(() => show('exercise5.outputShape', mlp3.forward(Tensor.random([16, 10], { normal: [0, 1] })).shape));
show('exercise5.numParams', mlp3.numParams);
show('exercise5.names', kiln.tidy(() => Object.keys(mlp3.namedParameters())));
for (const m of [model, affine, mlp3]) m.dispose();
show('liveTensors', kiln.memory().tensors);
