#!/usr/bin/python3
"""Reference step times for the standard workloads (see docs/workloads.md), in PyTorch on the CPU.

usage: torch_reference.py [--threads N] [--dtype f32|f64] [--steps N] [--workload NAME ...] [--json]
Prints one line per workload: median milliseconds per training step, and peak RSS in MiB.
"""
import argparse, ctypes, json, math, os, resource, sys, time

import torch
import torch.nn as nn


def openblas():
    """The OpenBLAS that torch multiplies with, or None (another BLAS)."""
    for name in ("libblas.so.3", "libopenblas.so.0"):  # Debian's torch links the first
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib
        except (OSError, AttributeError):
            pass
    return None


def blas_description():
    lib = openblas()
    if lib is None:
        return "not OpenBLAS"
    core = lib.openblas_get_corename().decode()
    why = os.environ.get("SEQGRAD_REFERENCE_CORETYPE_WHY")
    wider = None if why or not os.environ.get("OPENBLAS_CORETYPE") else widest_kernels_for(core)
    if wider:
        why = (f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} was set before the reference ran; "
               f"this CPU can run OpenBLAS's {wider} kernels")
    return f"OpenBLAS, {core} kernels" + (f" ({why})" if why else "")


# OpenBLAS picks its kernels by the CPU's model number, and a release older than
# the CPU may take it for a lesser one: Debian 12's 0.3.21 runs its "Prescott"
# (SSE3) kernels on an Emerald Rapids Xeon, a quarter of what its AVX-512 kernels
# reach there. Then the script runs itself again with the kernels for the CPU's
# widest vector units, so that ours is compared with PyTorch at its best on the
# machine, unless the caller chose them (OPENBLAS_CORETYPE); a choice below the
# CPU's best is then said beside the results.
VECTOR_RANK = {"haswell": 1, "zen": 1, "skylakex": 2, "cooperlake": 2, "sapphirerapids": 2}
FOR_HASWELL = {"avx2", "fma"}
FOR_SKYLAKEX = FOR_HASWELL | {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def widest_kernels_for(core):
    """The kernels for the CPU's widest vector units, if they are wider than core's, else None."""
    flags = cpu_flags()
    rank = VECTOR_RANK.get(core.lower(), 0)
    if FOR_SKYLAKEX <= flags and rank < 2:
        return "SkylakeX"
    if FOR_HASWELL <= flags and rank < 1:
        return "Haswell"
    return None


def kernels_for_the_cpu():
    """The environment that gives OpenBLAS the CPU's widest kernels, or {} (see above)."""
    lib = openblas()
    if lib is None or os.environ.get("OPENBLAS_CORETYPE"):
        return {}
    core = lib.openblas_get_corename().decode()
    chosen = widest_kernels_for(core)
    if chosen is None:
        return {}
    return {"OPENBLAS_CORETYPE": chosen,
            "SEQGRAD_REFERENCE_CORETYPE_WHY": f"OPENBLAS_CORETYPE={chosen} set by the reference: OpenBLAS chose its {core} kernels for this CPU"}


# seqgrad keeps freed memory in the process (autograd/fast/heap.cpp: glibc's mmap
# threshold 256 MiB, its trim threshold 512 MiB), so that a step's large
# buffers do not come back from the kernel a page fault per page. glibc's
# defaults hand PyTorch's large tensors back to the kernel as they are freed:
# where a page fault is dear (a VM), that alone made its transformer-long step
# 7 times slower (340-431 against 48-50 ms). The reference runs with the same
# thresholds, unless the caller set them, so that the ratios compare the
# computations, not the allocators' settings.
ALLOCATOR = {"MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(512 << 20)}


def allocator_for_the_comparison():
    if any(name in os.environ for name in ALLOCATOR):  # the caller's, or ours after the rerun
        return {}
    said = " ".join(f"{k}={v}" for k, v in ALLOCATOR.items())
    return dict(ALLOCATOR, SEQGRAD_REFERENCE_ALLOCATOR=f"glibc malloc with seqgrad's thresholds ({said}, set by the reference)")


def allocator_description():
    said = os.environ.get("SEQGRAD_REFERENCE_ALLOCATOR")
    if said:
        return said
    chosen = " ".join(f"{k}={os.environ[k]}" for k in ALLOCATOR if k in os.environ)
    return f"glibc malloc ({chosen}, set before the reference ran)" if chosen else "glibc malloc, its defaults"


def rerun_for_a_fair_comparison():
    """Runs the script again (glibc reads its thresholds, OpenBLAS its kernels, at start) when either needs setting."""
    changes = dict(kernels_for_the_cpu(), **allocator_for_the_comparison())
    if not changes:
        return
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, **changes))

V, D, H, FF, L = 16, 64, 4, 256, 2
SHAPES = {"rnn": (32, 64), "rnn-fused": (32, 64), "lstm-fused": (32, 64), "gru-fused": (32, 64),
          "transformer": (32, 64), "transformer-long": (4, 512), "transformer-wide": (16, 128)}
# transformer-wide: the size a student trains on a text of their own (d_model 256, 8 heads, FFN 1024, 4 layers).
WIDE = dict(V=96, D=256, H=8, FF=1024, L=4)


class SteppedRNN(nn.Module):
    """An Elman RNN stepped one time step at a time, as a from-scratch engine runs it."""

    def __init__(self):
        super().__init__()
        self.emb, self.cell, self.out = nn.Embedding(V, D), nn.RNNCell(D, D), nn.Linear(D, V)

    def forward(self, x):
        e = self.emb(x)
        h = torch.zeros(x.shape[0], D, dtype=e.dtype)
        hs = []
        for t in range(x.shape[1]):
            h = self.cell(e[:, t], h)
            hs.append(h)
        return self.out(torch.stack(hs, 1))


class FusedRNN(nn.Module):
    """The same RNN through PyTorch's fused nn.RNN kernel."""

    def __init__(self):
        super().__init__()
        self.emb, self.rnn, self.out = nn.Embedding(V, D), nn.RNN(D, D, batch_first=True), nn.Linear(D, V)

    def forward(self, x):
        return self.out(self.rnn(self.emb(x))[0])


class FusedGated(nn.Module):
    """A one-layer LSTM or GRU (hidden 64) through PyTorch's fused kernel."""

    def __init__(self, kind):
        super().__init__()
        cell = {"lstm": nn.LSTM, "gru": nn.GRU}[kind]
        self.emb, self.rnn, self.out = nn.Embedding(V, D), cell(D, D, batch_first=True), nn.Linear(D, V)

    def forward(self, x):
        return self.out(self.rnn(self.emb(x))[0])


class Decoder(nn.Module):
    """Decoder-only Transformer: post-LN blocks, ReLU FFN, sinusoidal PE, causal mask, no dropout."""

    def __init__(self, T, V=V, D=D, H=H, FF=FF, L=L):
        super().__init__()
        self.D = D
        self.emb, self.out = nn.Embedding(V, D), nn.Linear(D, V)
        pe = torch.zeros(T, D)
        pos = torch.arange(T).unsqueeze(1)
        div = torch.exp(torch.arange(0, D, 2) * (-math.log(10000.0) / D))
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        self.register_buffer("pe", pe)
        self.register_buffer("mask", torch.triu(torch.full((T, T), float("-inf")), 1))
        layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)

    def forward(self, x):
        return self.out(self.enc(self.emb(x) * math.sqrt(self.D) + self.pe, mask=self.mask.to(self.pe.dtype)))


def build(name, T):
    fixed = {"rnn": SteppedRNN, "rnn-fused": FusedRNN,
             "lstm-fused": lambda: FusedGated("lstm"), "gru-fused": lambda: FusedGated("gru")}
    if name == "transformer-wide":
        return Decoder(T, **WIDE)
    return fixed.get(name, lambda: Decoder(T))()


def bench(name, dtype, steps):
    B, T = SHAPES[name]
    torch.manual_seed(0)
    model = build(name, T).to(dtype)
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    loss_fn = nn.CrossEntropyLoss()
    vocab = WIDE["V"] if name == "transformer-wide" else V
    x, y = torch.randint(0, vocab, (B, T)), torch.randint(0, vocab, (B, T))

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x).reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.item()

    # The warm-up's losses: the same computation whichever kernels OpenBLAS runs
    # agrees with itself to float rounding, which these show.
    first_losses = [step() for _ in range(3)]
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e3, first_losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dtype", choices=["f32", "f64"], default="f32")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--workload", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rerun_for_a_fair_comparison()
    torch.set_num_threads(a.threads)
    dtype = {"f32": torch.float32, "f64": torch.float64}[a.dtype]
    rows = []
    for name in a.workload:
        ms, first_losses = bench(name, dtype, a.steps)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rows.append({"workload": name, "threads": a.threads, "dtype": a.dtype, "ms_per_step_median": round(ms, 3), "peak_rss_mib_so_far": round(rss, 1), "blas": blas_description(), "allocator": allocator_description(), "first_losses": first_losses})
    if a.json:
        json.dump(rows, sys.stdout)
        print()
    else:
        for r in rows:
            print(f"{r['workload']:17s} threads={r['threads']} {r['dtype']} median_ms_per_step={r['ms_per_step_median']:.2f} peak_rss_mib_so_far={r['peak_rss_mib_so_far']:.0f} blas={r['blas']!r} allocator={r['allocator']!r}")


if __name__ == "__main__":
    main()
