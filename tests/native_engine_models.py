"""tests/native_engine_models.py: small PyTorch models (an MLP, a transformer, a CNN) and their
ONNX export, shared by the native engine's model tests and benchmarks/bench_native_engine.py."""

import io
import math

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, d_in=16, hidden=32, d_out=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.GELU(), nn.Linear(hidden, d_out), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    """A pre-norm decoder block: causal self-attention written out (matmul, scale, mask,
    softmax, matmul) and a GELU MLP."""

    def __init__(self, d, heads, max_len=512):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("mask", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1 / math.sqrt(d // self.heads))
        scores = scores.masked_fill(~self.mask[:t, :t], float("-inf"))
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))


class Transformer(nn.Module):
    def __init__(self, layers=2, d=256, heads=4):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        return self.ln(self.blocks(x))


class CNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2), nn.LeakyReLU(0.1),
            nn.AvgPool2d(2), nn.Conv2d(16, 16, 1), nn.Tanh())
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x).log_softmax(-1)


def export(module, example, dynamic_axes=None, opset=17):
    """The module's ONNX export (TorchScript exporter: the dynamo one needs onnxscript)."""
    module.eval()
    f = io.BytesIO()
    torch.onnx.export(module, (example,), f, dynamo=False, opset_version=opset,
                      input_names=["x"], output_names=["y"], dynamic_axes=dynamic_axes)
    import onnx
    return onnx.load_from_string(f.getvalue())
