// Step 1 of the tutorial: tensors — creation, shape, dtypes (Burn's kinds), reading data.
//
//   node examples/js/tutorial/01_tensors.mjs
//
// Burn's Tensor<B, D, K> fixes the backend B, the rank D and the kind K (Float, Int,
// Bool) in the type. In kiln-dl one `kiln` instance is one backend (the CPU engine in
// WebAssembly), the rank is the length of `shape`, and the kind is `dtype`: 'float32'
// (Float), 'int32' (Int) or 'bool' (Bool). C++ (Kiln's native API), for comparison:
//
//   using B = kiln::Cpu;
//   auto a = Tensor<B, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}}, device);
//   auto labels = Tensor<B, 1, Int>::from_data({0, 1, 2, 1}, device);
//   auto mask = a.greater_elem(2.f);              // Tensor<B, 2, Bool>
//
// Every line printed as `name: <json>` is checked by tests/js/tutorial.test.mjs.
import { init } from 'kiln-dl';

const kiln = await init();
const { Tensor } = kiln;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);

// ---- Float tensors (the default dtype) ----
const a = Tensor.fromData([[1, 2], [3, 4]]);     // Burn: Tensor::<B, 2>::from_data([[1.0, 2.0], [3.0, 4.0]], &device)
const b = Tensor.fromData([10, 20, 30]);         // from_floats
const zeros = Tensor.zeros([3, 4]);
const ones = Tensor.ones([2, 2]);
const full = Tensor.full([5], 3.14);
const likeA = Tensor.onesLike(a);
kiln.seed(42);                                   // random tensors are reproducible for a seed
const uniform = Tensor.random([4, 4], { uniform: [0, 1] });
const normal = Tensor.random([4, 4], { normal: [0, 1] });

show('a', a.toArray());
show('a.shape', a.shape);
show('a.dtype', a.dtype);
show('b', b.toArray());
show('zeros.shape', zeros.shape);
show('zeros.sum', kiln.tidy(() => zeros.sum().item())); // tidy frees the temporary sum (Step 2)
show('ones', ones.toArray());
show('full', Array.from(full.dataSync()));
show('likeA', likeA.toArray());
show('uniform.inRange', uniform.dataSync().every((v) => v >= 0 && v < 1));
show('normal.shape', normal.shape);

// ---- Int tensors ----
const labels = Tensor.fromData([0, 1, 2, 1], { dtype: 'int32' });
const range = Tensor.arange(0, 5);               // Burn: Tensor::<B, 1, Int>::arange(0..5, &device)
show('labels', labels.toArray());
show('labels.dtype', labels.dtype);
show('range', range.toArray());

// ---- Bool tensors ----
const mask = a.greaterElem(2);                   // true where a > 2
show('mask', mask.toArray());
show('mask.dtype', mask.dtype);

// ---- Reading data back ----
show('a.dataSync', Array.from(a.dataSync()));    // flat, row-major (Burn's to_data().to_vec())
show('scalar', kiln.tidy(() => Tensor.fromData([42]).item())); // Burn's into_scalar()

// ---- Printing ----
console.log(a.toString({ precision: 2 }));

// ---- Exercise 1 ----
// 1. a 3x3 identity built by hand with fromData; 2. an int32 tensor [10, 20, 30];
// 3. a bool tensor: which elements of the identity are > 0; 4. print all three.
const identity = Tensor.fromData([[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
const ints = Tensor.fromData([10, 20, 30], { dtype: 'int32' });
const positive = identity.greaterElem(0);
console.log(identity.toString());
console.log(ints.toString());
console.log(positive.toString());
show('exercise1.identity', identity.toArray());
show('exercise1.eyeMatches', kiln.tidy(() => Tensor.eye(3).equal(identity).all().item()));
show('exercise1.ints', ints.toArray());
show('exercise1.positive', positive.toArray());

// kiln-dl tensors live in WebAssembly memory: free them when done (Step 2 shows kiln.tidy).
for (const t of [a, b, zeros, ones, full, likeA, uniform, normal, labels, range, mask, identity, ints, positive]) t.dispose();
show('liveTensors', kiln.memory().tensors);
