"""bench:engine's torch row (bench/engine.ts runs it when a python with torch is found; optional).

Trains mnist-mlp 784-H-10 (ReLU, softmax cross-entropy, Adam) on ONE thread for the batches that bench/engine.ts
exported from the same Run (examples/mnist-fast.json: same initial weights, same data order), hashing the state
after every step with sha256 over the weights and the Adam moments (the bytes the sha256-v1 state digest hashes),
so steps/s counts step + hash like the pouw rows. Not bit-equal to pouw by design (torch's float32 order).

  python bench/torch_mnist.py EXPORT_FILE   -> one JSON line on stdout

EXPORT_FILE: a JSON header line (hidden, batch, steps, lr, beta1, beta2, epsilon), then float32 W1, b1, W2, b2, then
per step: float32 x [batch, 784] and uint8 y [batch].
"""
import hashlib
import json
import sys
import time

import numpy as np
import torch


def main(path: str) -> None:
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    with open(path, "rb") as f:
        header = json.loads(f.readline())
        raw = f.read()
    H, B, steps = header["hidden"], header["batch"], header["steps"]
    at = 0

    def take(n: int, dtype) -> np.ndarray:
        nonlocal at
        size = n * np.dtype(dtype).itemsize
        a = np.frombuffer(raw, dtype=dtype, count=n, offset=at)
        at += size
        return a

    params = [
        torch.tensor(take(784 * H, np.float32).reshape(784, H).copy(), requires_grad=True),
        torch.tensor(take(H, np.float32).copy(), requires_grad=True),
        torch.tensor(take(H * 10, np.float32).reshape(H, 10).copy(), requires_grad=True),
        torch.tensor(take(10, np.float32).copy(), requires_grad=True),
    ]
    batches = []
    for _ in range(steps):
        x = torch.from_numpy(take(B * 784, np.float32).reshape(B, 784).copy())
        y = torch.from_numpy(take(B, np.uint8).astype(np.int64))
        batches.append((x, y))
    opt = torch.optim.Adam(params, lr=header["lr"], betas=(header["beta1"], header["beta2"]), eps=header["epsilon"], foreach=False)

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
    for t, (x, y) in enumerate(batches, start=1):
        c0, t0 = time.process_time(), time.perf_counter()
        opt.zero_grad(set_to_none=True)
        z1 = x @ params[0] + params[1]
        a1 = torch.relu(z1)
        z2 = a1 @ params[2] + params[3]
        loss = torch.nn.functional.cross_entropy(z2, y)
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
    final = np.concatenate([p.detach().numpy().ravel() for p in params]).astype(np.float32)
    out_path = path + ".final.f32"
    final.tofile(out_path)
    state_bytes = 4 * sum(p.numel() for p in params) * 3
    print(json.dumps({
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "steps": steps,
        "stepsPerSecond": n / (step_s + hash_s),
        "hashShare": hash_s / (step_s + hash_s),
        "stepMs": 1000 * step_s / n,
        "hashMs": 1000 * hash_s / n,
        "stepCpuMs": 1000 * step_cpu / n,
        "hashCpuMs": 1000 * hash_cpu / n,
        "hashShareCpu": hash_cpu / (step_cpu + hash_cpu),
        "firstStepSeconds": first,
        "stateBytes": state_bytes,
        "hashes": ["0x" + hashlib.sha256(state_hash()).hexdigest()],
        "losses": losses,
        "finalWeights": out_path,
    }))


if __name__ == "__main__":
    main(sys.argv[1])
