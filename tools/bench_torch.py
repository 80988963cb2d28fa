#!/usr/bin/env python3
"""bench_torch: PyTorch's kernels for the chapters' operations, timed the way the chapters'
benchmarks time theirs, so that a reader can put the two tables side by side.

The same method as common/timing.cu: CUDA events around the operation only, three warm-up runs,
L2 flushed before every run by reading a buffer twice its size, the median of 15 to 200 runs, and
the device-to-device copy bandwidth of 1 GiB measured in the same process. GB/s counts the bytes
the chapters' benchmarks count for the same operation (bench_reduction, bench_softmax,
bench_norm, bench_topk), so the percentages compare directly.

    python3 tools/bench_torch.py                     every chapter's shapes
    python3 tools/bench_torch.py --chapters=ch10_norm --csv

Needs PyTorch with CUDA; it is not part of the build or of the tests.
"""
import argparse
import statistics
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("bench_torch: PyTorch is not installed")

REDUCTION_SIZES = [1 << 20, 1 << 24, 1 << 28]
SOFTMAX_SHAPES = [(4096, 2048), (32768, 1024), (4096, 8192), (1024, 32768), (256, 131072),
                  (65536, 128), (1, 131072)]
NORM_SHAPES = [(4096, 4096), (16384, 1024), (4096, 8192), (1024, 16384), (16384, 4096),
               (1, 8192), (32, 8192)]
TOPK_SHAPES = [(1, 128256), (64, 128256), (1024, 50257), (1024, 128256), (4096, 32000)]
TOPK_KS = [1, 50, 1024]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


class Timer:
    """Events around `fn` only; before each run, L2 is flushed and the stream is held back long
    enough for Python to enqueue the run behind it (so that host overhead is not timed)."""

    def __init__(self):
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush_buffer = torch.ones(max(2 * l2, 64 << 20) // 4, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)

    def once_us(self, fn):
        self.flush_buffer.sum()      # reads only: no dirty lines left for the timed run to write back
        torch.cuda._sleep(200_000)   # about 0.1 ms of GPU time, while Python enqueues the rest
        self.start.record()
        fn()
        self.stop.record()
        self.stop.synchronize()
        return 1000.0 * self.start.elapsed_time(self.stop)

    def median_us(self, fn, min_runs=15, max_runs=200, budget_ms=200.0):
        for _ in range(3):
            self.once_us(fn)
        samples = [self.once_us(fn)]
        runs = min(max(int(budget_ms * 1000.0 / max(samples[0], 1.0)), min_runs), max_runs)
        samples += [self.once_us(fn) for _ in range(runs - 1)]
        return statistics.median(samples)


def copy_bandwidth_gbs(timer):
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda").fill_(0x5A)
    dst = torch.empty_like(src)
    us = timer.median_us(lambda: dst.copy_(src), min_runs=20, max_runs=20)
    return 2.0 * src.numel() / (us * 1e3)


def reduction_cases():
    for dtype in ("fp32", "bf16"):
        for n in REDUCTION_SIZES:
            x = torch.randn(n, device="cuda").to(DTYPES[dtype])
            yield "sum", f"2^{n.bit_length() - 1}", dtype, (lambda x=x: x.sum()), n * x.element_size()
            if dtype == "fp32":
                yield "max", f"2^{n.bit_length() - 1}", dtype, (lambda x=x: x.max()), 4 * n


def softmax_cases():
    for dtype in ("fp32", "bf16"):
        for rows, cols in SOFTMAX_SHAPES:
            x = torch.randn(rows, cols, device="cuda").to(DTYPES[dtype])
            y = torch.softmax(x, dim=-1)
            dy = torch.randn_like(y)
            size = x.element_size() * rows * cols
            shape = f"{rows}x{cols}"
            yield "softmax", shape, dtype, (lambda x=x: torch.softmax(x, dim=-1)), 2 * size
            yield "log_softmax", shape, dtype, (lambda x=x: torch.log_softmax(x, dim=-1)), 2 * size
            yield ("softmax_backward", shape, dtype,
                   (lambda y=y, dy=dy: torch._softmax_backward_data(dy, y, -1, y.dtype)), 3 * size)


def norm_cases():
    for dtype in ("fp32", "bf16"):
        for rows, cols in NORM_SHAPES:
            t = DTYPES[dtype]
            x = torch.randn(rows, cols, device="cuda").to(t)
            residual = torch.randn_like(x)
            gamma = torch.randn(cols, device="cuda").to(t)
            beta = torch.randn(cols, device="cuda").to(t)
            e = x.element_size()
            matrix = e * rows * cols
            shape = f"{rows}x{cols}"
            # The byte counts of bench_norm: x and y, the parameters once, the statistics (fp32).
            yield ("layer_norm", shape, dtype,
                   (lambda x=x, g=gamma, b=beta: F.layer_norm(x, x.shape[-1:], g, b, 1e-5)),
                   2 * matrix + 2 * e * cols + 8 * rows)
            if hasattr(F, "rms_norm"):
                yield ("rms_norm", shape, dtype, (lambda x=x, g=gamma: F.rms_norm(x, x.shape[-1:], g, 1e-5)),
                       2 * matrix + e * cols + 4 * rows)

                def add_rms_norm(x=x, residual=residual, g=gamma):
                    r = x + residual  # PyTorch has no fused op: two kernels, r written and read
                    return F.rms_norm(r, r.shape[-1:], g, 1e-5)

                yield ("add_rms_norm (2 kernels)", shape, dtype, add_rms_norm,
                       4 * matrix + e * cols + 4 * rows)


def topk_cases():
    for dtype in ("fp32", "bf16"):
        for rows, cols in TOPK_SHAPES:
            x = (2.0 * torch.randn(rows, cols, device="cuda")).to(DTYPES[dtype])
            e = x.element_size()
            for k in TOPK_KS:
                shape = f"{rows}x{cols} k={k}"
                # bench_topk's byte counts: the logits once, k values and int64 indices per row;
                # for softmax + top-k, k indices and fp32 probabilities and one fp32 lse per row.
                yield ("topk", shape, dtype, (lambda x=x, k=k: torch.topk(x, k, dim=-1)),
                       rows * cols * e + rows * k * (e + 8))

                def softmax_topk(x=x, k=k):
                    # No fused op: the probabilities of the whole row are written, then searched.
                    probs = torch.softmax(x, dim=-1, dtype=torch.float32)
                    return torch.topk(probs, k, dim=-1)

                yield ("softmax then topk (2 kernels)", shape, dtype, softmax_topk,
                       rows * cols * e + rows * k * 12 + rows * 4)


CHAPTERS = {"ch07_reduction": reduction_cases, "ch10_softmax": softmax_cases,
            "ch10_norm": norm_cases, "ch11_topk": topk_cases}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapters", default=",".join(CHAPTERS),
                        help="comma-separated, from: " + ", ".join(CHAPTERS))
    parser.add_argument("--csv", action="store_true")
    args = parser.parse_args()
    chapters = args.chapters.split(",")
    unknown = [c for c in chapters if c not in CHAPTERS]
    if unknown:
        parser.error("unknown chapter(s): " + ", ".join(unknown))
    if not torch.cuda.is_available():
        sys.exit("bench_torch: no CUDA device")

    torch.backends.cudnn.benchmark = False
    timer = Timer()
    copy = copy_bandwidth_gbs(timer)
    name = torch.cuda.get_device_name(0)
    if args.csv:
        print("chapter,op,shape,dtype,median_us,gb_per_s,pct_of_copy")
    else:
        print(f"{name}, PyTorch {torch.__version__}, CUDA {torch.version.cuda}")
        print(f"copy bandwidth (device-to-device, read + write): {copy:.0f} GB/s\n")
        print(f"{'op':30} {'shape':20} {'dtype':6} {'time(us)':>10} {'GB/s':>8} {'% copy':>7}")
    with torch.inference_mode():
        for chapter in chapters:
            for op, shape, dtype, fn, nbytes in CHAPTERS[chapter]():
                us = timer.median_us(fn)
                gbs = nbytes / (us * 1e3)
                if args.csv:
                    print(f"{chapter},{op},{shape},{dtype},{us:.3f},{gbs:.1f},{100 * gbs / copy:.1f}")
                else:
                    print(f"{op:30} {shape:20} {dtype:6} {us:10.2f} {gbs:8.0f} {100 * gbs / copy:6.1f}%")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
