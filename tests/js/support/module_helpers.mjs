// Shared by tests/js/module_*.test.mjs and module_torch_gen_kiln.mjs: the user modules that
// mirror module_torch_gen.py's torch modules, and fixture helpers.

/** The MLP of module_torch_gen.py: fc1 Linear(3, 4), relu, fc2 Linear(4, 2), times a Param `scale` [2]. */
export function Mlp(kiln) {
  return class Mlp extends kiln.Module {
    constructor() {
      super();
      this.fc1 = kiln.nn.linear({ dInput: 3, dOutput: 4 });
      this.fc2 = kiln.nn.linear({ dInput: 4, dOutput: 2 });
      this.scale = this.param('scale', kiln.Tensor.ones([2]));
    }

    forward(x) {
      return kiln.tidy(() => this.fc2.forward(this.fc1.forward(x).relu()).mul(this.scale));
    }
  };
}

/**
 * The same MLP written with JS Params only (torch.nn.Linear's y = x W^T + b): its keys are
 * w1, b1, w2, b2, scale.
 */
export function ParamMlp(kiln) {
  return class ParamMlp extends kiln.Module {
    constructor() {
      super();
      this.w1 = this.param('w1', kiln.Tensor.zeros([4, 3]));
      this.b1 = this.param('b1', kiln.Tensor.zeros([4]));
      this.w2 = this.param('w2', kiln.Tensor.zeros([2, 4]));
      this.b2 = this.param('b2', kiln.Tensor.zeros([2]));
      this.scale = this.param('scale', kiln.Tensor.ones([2]));
    }

    forward(x) {
      return kiln.tidy(() => {
        const h = x.matmul(this.w1.transpose()).add(this.b1).relu();
        return h.matmul(this.w2.transpose()).add(this.b2).mul(this.scale);
      });
    }
  };
}

/** {key: Tensor} from the fixture's flat values and shapes (inside a tidy, or dispose them). */
export function stateFromFixture(kiln, values, shapes, rename = (k) => k) {
  const out = {};
  for (const k of Object.keys(values)) {
    out[rename(k)] = kiln.Tensor.fromData(Float32Array.from(values[k]), { shape: shapes[k] });
  }
  return out;
}

/** fc1.weight -> w1, ... (Mlp's keys -> ParamMlp's). */
export const TO_PARAM_MLP = { 'fc1.weight': 'w1', 'fc1.bias': 'b1', 'fc2.weight': 'w2', 'fc2.bias': 'b2', scale: 'scale' };

/** MSE loss [1] of a module's output on x against y. */
export function mse(kiln, out, y) {
  return kiln.tidy(() => {
    const d = out.sub(y);
    return d.mul(d).mean();
  });
}
