"""examples/train_gpt_policy.py: a small GPT trained on synthetic tokens with xpuruntime's
kernels steering torch: ``set_kernel_policy(attention="flash_v2", matmul="cublaslt", ...)``,
``autocast`` and a captured training step (``capture_graph``); the same run on plain torch
reaches the same loss.

    python examples/train_gpt_policy.py --steps 200

The data are sequences of a fixed random permutation walk (token t+1 = perm[token t]),
which a model learns quickly: the loss falls from log(vocab) towards zero.
"""

import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.RMSNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=256, d=256, heads=4, layers=4, seq=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(seq, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def walk_table(perm, seq):
    """walks[t, s]: the token t steps after s (perm applied t times), t = 0..seq."""
    rows = [torch.arange(perm.numel(), device=perm.device)]
    for _ in range(seq):
        rows.append(perm[rows[-1]])
    return torch.stack(rows)


def synthetic_batch(walks, batch, generator):
    """(inputs, targets) of `batch` walks from random starts: a few kernels a step, so that
    the data do not cost the training loop more than its model (the walk step by step took
    ~130 indexing calls, ~1 ms of host time, a step)."""
    start = torch.randint(0, walks.shape[1], (batch,), generator=generator,
                          device=walks.device)
    data = walks[:, start].t()
    return data[:, :-1].contiguous(), data[:, 1:].contiguous()


def train(steps, use_policy, graph=True, seed=0, batch=16, seq=128, dtype=torch.bfloat16,
          log_every=0, attention="flash_v2"):
    """Trains a fresh model; returns (losses, seconds per step after warm-up). attention: the
    policy's kernel for op ``attention`` ("flash_v2", "cudnn", "torch")."""
    import xpuruntime.pytorch as xt

    torch.manual_seed(seed)
    model = GPT(seq=seq).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, capturable=graph)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    walks = walk_table(torch.randperm(256, generator=gen, device="cuda"), seq)
    inputs, targets = synthetic_batch(walks, batch, gen)
    static_in, static_target = inputs.clone(), targets.clone()
    if use_policy:
        xt.set_kernel_policy(attention=attention, matmul="cublaslt", layer_norm="fused",
                             rms_norm="fused")
    else:
        xt.clear_kernel_policy()

    def step():
        opt.zero_grad(set_to_none=False)
        with xt.autocast(dtype):
            logits = model(static_in)
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), static_target.view(-1))
        loss.backward()
        opt.step()
        return loss

    try:
        run = xt.capture_graph(step, warmup=3).replay if graph else step
        losses, start = [], None
        for i in range(steps):
            x, y = synthetic_batch(walks, batch, gen)
            static_in.copy_(x)
            static_target.copy_(y)
            loss = run()
            if i == 5:
                torch.cuda.synchronize()
                start = time.perf_counter()
            losses.append(loss.detach().clone())
            if log_every and i % log_every == 0:
                print(f"step {i:4d}  loss {loss.item():.4f}")
        torch.cuda.synchronize()
        seconds = (time.perf_counter() - start) / max(1, steps - 6)
    finally:
        xt.clear_kernel_policy()
    return [float(v) for v in torch.stack(losses).cpu()], seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--no-graph", action="store_true")
    parser.add_argument("--attention", default="flash_v2", choices=("flash_v2", "cudnn", "torch"))
    args = parser.parse_args()
    graph = not args.no_graph
    ours, t_ours = train(args.steps, True, graph, log_every=50, attention=args.attention)
    plain, t_plain = train(args.steps, False, graph)
    print(f"xpuruntime policy: loss {ours[0]:.3f} -> {ours[-1]:.3f}, {t_ours * 1e3:.3f} ms/step")
    print(f"plain torch:       loss {plain[0]:.3f} -> {plain[-1]:.3f}, {t_plain * 1e3:.3f} ms/step")
    print(f"step time ratio (torch / policy): {t_plain / t_ours:.2f}x")
    assert ours[-1] < 0.5 * math.log(256), "the loss did not fall"
    assert abs(ours[-1] - plain[-1]) < 0.1 + 0.1 * plain[-1], "policy and torch disagree"


if __name__ == "__main__":
    main()
