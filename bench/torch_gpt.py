"""bench:engine's torch row for the GPT-class char-transformer (bench/engine.ts runs it when a python with torch is found).

The model of examples/gpt-sotu-v3.json in torch float32 on ONE thread: the same architecture and shapes as
verifier/src/ml/models/transformer.ts (token and learned position embeddings; per layer pre-LayerNorm, Wq, Wk, Wv, Wo
without biases, attention as an explicit product q.k^T * 1/sqrt(dh) with an additive causal mask and softmax, P.v,
then pre-LayerNorm ReLU feed-forward W1 + b1, W2 + b2; final LayerNorm; head + bias; mean cross-entropy), Adam, the
same batch (B windows of T+1 token ids over the model's vocabulary). After every step the state is hashed with sha256
over the weights and the Adam moments (the bytes pouw's sha256 state digests hash), so steps/s counts step + hash
like the pouw rows. Not bit-equal to pouw by design (torch's float32 order, its own initialisation and token draws):
the row times the same work, it does not reproduce pouw's trajectory.

  python bench/torch_gpt.py LAYERS DMODEL HEADS CONTEXT FF VOCAB BATCH STEPS LR   -> one JSON line on stdout
"""
import hashlib
import json
import math
import sys
import time

import torch


def main(L: int, d: int, H: int, T: int, F: int, V: int, B: int, steps: int, lr: float) -> None:
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    g = torch.Generator().manual_seed(17)

    def uniform(*shape, a):
        return ((torch.rand(*shape, generator=g) * 2 - 1) * a).requires_grad_(True)

    def glorot(i, o):
        return uniform(i, o, a=math.sqrt(6 / (i + o)))

    params = [uniform(V, d, a=0.02 * math.sqrt(3)), uniform(T, d, a=0.02 * math.sqrt(3))]
    for _ in range(L):
        params += [torch.ones(d, requires_grad=True), torch.zeros(d, requires_grad=True)]
        params += [glorot(d, d) for _ in range(4)]
        params += [torch.ones(d, requires_grad=True), torch.zeros(d, requires_grad=True)]
        params += [glorot(d, F), torch.zeros(F, requires_grad=True), glorot(F, d), torch.zeros(d, requires_grad=True)]
    params += [torch.ones(d, requires_grad=True), torch.zeros(d, requires_grad=True), glorot(d, V), torch.zeros(V, requires_grad=True)]
    opt = torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999), eps=1e-8)
    dh = d // H
    mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
    ln = torch.nn.functional.layer_norm

    def loss_of(tokens: torch.Tensor) -> torch.Tensor:
        inputs, targets = tokens[:, :T], tokens[:, 1:]
        x = params[0][inputs] + params[1]  # [B, T, d]
        for l in range(L):
            g1, b1_, wq, wk, wv, wo, g2, b2_, w1, fb1, w2, fb2 = params[2 + 12 * l: 14 + 12 * l]
            y = ln(x, (d,), g1, b1_, 1e-5)
            q = (y @ wq).view(B, T, H, dh).transpose(1, 2)
            k = (y @ wk).view(B, T, H, dh).transpose(1, 2)
            v = (y @ wv).view(B, T, H, dh).transpose(1, 2)
            p = torch.softmax(q @ k.transpose(-1, -2) * (1 / math.sqrt(dh)) + mask, dim=-1)
            o = (p @ v).transpose(1, 2).reshape(B, T, d)
            x = x + o @ wo
            y2 = ln(x, (d,), g2, b2_, 1e-5)
            x = x + (torch.relu(y2 @ w1 + fb1) @ w2 + fb2)
        base = 2 + 12 * L
        logits = ln(x, (d,), params[base], params[base + 1], 1e-5) @ params[base + 2] + params[base + 3]
        return torch.nn.functional.cross_entropy(logits.reshape(B * T, V), targets.reshape(B * T))

    def state_hash() -> bytes:
        w = hashlib.sha256()
        for p in params:
            w.update(p.detach().numpy())  # the buffer in place, no copy
        o = hashlib.sha256()
        for key in ("exp_avg", "exp_avg_sq"):
            for p in params:
                o.update(opt.state[p][key].numpy())
        return w.digest() + o.digest()

    step_s = hash_s = step_cpu = hash_cpu = 0.0
    losses = []
    first = 0.0
    for t in range(1, steps + 1):
        tokens = torch.randint(0, V, (B, T + 1), generator=g)
        c0, t0 = time.process_time(), time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_of(tokens)
        loss.backward()
        opt.step()
        c1, t1 = time.process_time(), time.perf_counter()
        state_hash()
        c2, t2 = time.process_time(), time.perf_counter()
        losses.append(float(loss.detach()))
        if t == 1:
            first = t2 - t0
        else:
            step_s += t1 - t0
            hash_s += t2 - t1
            step_cpu += c1 - c0
            hash_cpu += c2 - c1
    n = steps - 1
    print(json.dumps({
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "params": sum(p.numel() for p in params),
        "steps": steps,
        "stepsPerSecond": n / (step_s + hash_s),
        "hashShare": hash_s / (step_s + hash_s),
        "stepMs": 1000 * step_s / n,
        "hashMs": 1000 * hash_s / n,
        "stepCpuMs": 1000 * step_cpu / n,
        "hashCpuMs": 1000 * hash_cpu / n,
        "hashShareCpu": hash_cpu / (step_cpu + hash_cpu),
        "firstStepSeconds": first,
        "stateBytes": 4 * sum(p.numel() for p in params) * 3,
        "losses": losses,
    }))


if __name__ == "__main__":
    a = sys.argv[1:]
    main(*(int(x) for x in a[:8]), float(a[8]))
