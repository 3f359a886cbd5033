#!/usr/bin/python3
"""PyTorch side of tests/native/record/torch_interop_attention_test.cpp.

Usage: torch_interop_attention.py WORK_DIR

Exit status: 0 when every check passes, 1 with a message on the first mismatch, 77 when
torch cannot be imported (the test is then skipped).

Kiln -> PyTorch: kiln_mha.safetensors, kiln_encoder.safetensors, kiln_decoder.safetensors
(nn::MultiHeadAttention(8, 2), nn::TransformerEncoder(8, 16, 2 heads, 2 layers, norm_first,
relu), nn::TransformerDecoder(8, 16, 2 heads, 2 layers, post-norm, gelu)) load with
load_state_dict(strict=True) into torch.nn.MultiheadAttention(8, 2, batch_first=True),
torch.nn.TransformerEncoder(TransformerEncoderLayer(..., batch_first=True, norm_first=True),
2) and torch.nn.TransformerDecoder(TransformerDecoderLayer(..., activation="gelu",
batch_first=True), 2) (keys such as in_proj_weight, out_proj.weight,
layers.0.self_attn.in_proj_weight, layers.0.linear1.weight, layers.0.norm1.weight,
layers.1.multihead_attn.in_proj_bias, layers.1.norm3.bias) and reproduce the outputs in
kiln_attention.json for its inputs and masks (to 2e-5).
PyTorch -> Kiln: torch_mha/encoder/decoder.safetensors (torch's own seeded initialisation)
and torch_attention.json (the same inputs, torch's outputs).
"""
import json
import os
import sys

try:
    import torch
except ImportError as error:  # the C++ test skips on exit status 77
    print("torch_interop_attention.py: cannot import torch (%s); install python3-torch" % error)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_interop import read_safetensors, safetensors_bytes  # noqa: E402


def fail(message):
    print("torch_interop_attention.py: FAIL: " + message)
    sys.exit(1)


def tensor(j, dtype=torch.float32):
    return torch.tensor(j["data"], dtype=dtype).reshape(j["shape"])


def to_json(t):
    return {"shape": list(t.shape), "data": t.detach().flatten().tolist()}


def models():
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    enc = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="relu",
                                         batch_first=True, norm_first=True),
        2, enable_nested_tensor=False)
    dec = torch.nn.TransformerDecoder(
        torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, activation="gelu",
                                         batch_first=True, norm_first=False), 2)
    for m in (mha, enc, dec):
        m.eval()
    return {"mha": mha, "encoder": enc, "decoder": dec}


def run(name, m, io):
    # Gradients stay enabled (parameters require grad), so PyTorch takes its reference path,
    # not the inference fast path.
    if name == "mha":
        out, w = m(tensor(io["query"]), tensor(io["kv"]), tensor(io["kv"]),
                   key_padding_mask=tensor(io["mask_pad"], torch.bool))
        return {"context": out, "weights": w}
    if name == "encoder":
        return {"y": m(tensor(io["x"]), mask=tensor(io["mask_attn"], torch.bool),
                       src_key_padding_mask=tensor(io["mask_pad"], torch.bool))}
    return {"y": m(tensor(io["target"]), tensor(io["memory"]),
                   tgt_mask=tensor(io["target_mask_attn"], torch.bool),
                   memory_key_padding_mask=tensor(io["memory_mask_pad"], torch.bool))}


def main():
    work = sys.argv[1]
    with open(os.path.join(work, "kiln_attention.json")) as f:
        kiln = json.load(f)
    torch.manual_seed(7)
    ms = models()
    out_json = {}
    for name, m in ms.items():
        state = read_safetensors(os.path.join(work, "kiln_%s.safetensors" % name))
        if sorted(state) != sorted(m.state_dict()):
            fail("%s: keys differ: kiln %s vs torch %s" % (name, sorted(state), sorted(m.state_dict())))
        fresh = models()[name]
        fresh.load_state_dict(state, strict=True)
        got = run(name, fresh, kiln[name])
        for key, value in got.items():
            want = tensor(kiln[name][key])
            if value.shape != want.shape or not torch.allclose(value, want, atol=2e-5, rtol=1e-4):
                fail("%s.%s: torch %s vs kiln %s" % (name, key, value.flatten().tolist()[:6],
                                                     want.flatten().tolist()[:6]))
        print("%s: Kiln's record loads strictly and gives Kiln's outputs" % name)
        # PyTorch -> Kiln: torch's own initialisation.
        with open(os.path.join(work, "torch_%s.safetensors" % name), "wb") as f:
            f.write(safetensors_bytes(m.state_dict()))
        out_json[name] = {k: to_json(v) for k, v in run(name, m, kiln[name]).items()}
    with open(os.path.join(work, "torch_attention.json"), "w") as f:
        json.dump(out_json, f)


if __name__ == "__main__":
    main()
