"""Where the GT structured kernel's time goes, kernel by kernel (issue 26: on an H200 the
graphed kernel is 0.69 ms at N = 128 against 0.097 ms for the graphed standard layer, and
3.35x the eager layer at N = 1024 with full Sigma; which kernels are they?).

    python3 tests/benchmarks/profile_gauge_kernel.py [--device cuda] [--n 128,1024] [--out DIR]

For each N and Sigma (full, diagonal) it profiles, with ``torch.profiler``, five calls of the
eager kernel and (on CUDA) five graphed calls after a warm-up, and writes
``gauge_profile_<device>_<sigma>_n<N>.txt`` (the profiler's table, sorted by device time on
CUDA, by CPU time otherwise) and one ``gauge_profile_<device>.json`` with, per case, the
number of distinct device kernels and launches per call and the ten costliest operators.
It also times, on the kernel's own K (full Sigma, float64) at each N, the forms of the
attention weights in one process: the in-place chain (``kl_structured._weights_in_place``:
min, subtract, scale, exp, sum, divide; the CPU's form, and CUDA's before 2026-11-26), the
fused ``torch.softmax`` after ``-K / kappa`` (a negation and a division: CUDA's form in the
fifth GPU session) and after ``_causal_logits`` (one multiplication by -1/kappa: CUDA's form
now); medians of ``REPEATS`` synchronized calls, interleaved, and the largest difference
from the in-place chain (key ``softmax_ab`` of the JSON).  On CUDA it times the graphed
kernel (full Sigma) returning clones of its outputs (``graphs=True``, what users get)
against returning the graph's own buffers (``kl_attention_graphed(..., clone=False)``), key
``clone_ab``: what a static-output mode would save; and the per-token statistics from the
Triton kernel against the library calls, alone (1-8 warps a program) and inside the eager
and graphed kernel, key ``fused_ab`` (:func:`_fused_forms`).
Not a test: a measurement to read.  ``run_gpu_checks.sh gauge-profile`` runs it on CUDA.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

CALLS = 5
REPEATS = 21


def _inputs(tokens: int, diagonal: bool, device: str) -> tuple:
    """(config, backend, mu, Sigma, frames): the benchmark's seeded inputs at GT's size on
    torch and ``device``."""
    from attngeom.geometry_proofs.gauge.attention_benchmark import BenchmarkConfig, sample_inputs
    from attngeom.kernels.backend import get_backend
    from attngeom.geometry_proofs.gauge.accelerated.kl_attention import skew

    config = BenchmarkConfig(tokens=tokens, diagonal=diagonal, backend="torch", device=device)
    be = get_backend("torch", device)
    inputs = sample_inputs(config)
    mu, sigma, coordinates = (be.asarray(inputs[k]) for k in ("mu", "Sigma", "frame_coordinates"))
    return config, be, mu, sigma, skew(coordinates, config.head_dim, be)


def _profile_case(tokens: int, diagonal: bool, device: str, graphed: bool) -> tuple[str, dict]:
    from torch.profiler import ProfilerActivity, profile

    from attngeom.geometry_proofs.gauge.accelerated.kl_attention import kl_attention_structured

    config, be, mu, sigma, frames = _inputs(tokens, diagonal, device)

    def call():
        result = kl_attention_structured(mu, sigma, frames, config.kappa, be,
                                         diagonal_sigma=diagonal, graphs=graphed)
        be.synchronize(result.values)
        return result

    for _ in range(3):                       # warm-up (and the captures when graphed)
        call()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        for _ in range(CALLS):
            call()
    events = prof.key_averages()
    sort = "self_cuda_time_total" if device == "cuda" else "self_cpu_time_total"
    table = events.table(sort_by=sort, row_limit=40)

    def device_time(event) -> float:
        return float(getattr(event, "self_device_time_total", getattr(event, "self_cuda_time_total", 0.0)))

    kernels = [e for e in events if device == "cuda" and device_time(e) > 0 and not e.key.startswith("aten::")]
    costliest = sorted(events, key=device_time if device == "cuda" else (lambda e: e.self_cpu_time_total),
                       reverse=True)[:10]
    summary = {
        "tokens": tokens, "sigma": "diagonal" if diagonal else "full", "graphed": graphed,
        "device_kernels_distinct": len(kernels),
        "device_launches_per_call": sum(e.count for e in kernels) / CALLS,
        "top": [{"name": e.key, "count_per_call": e.count / CALLS,
                 "self_us_per_call": (device_time(e) if device == "cuda" else e.self_cpu_time_total) / CALLS}
                for e in costliest],
    }
    return table, summary


def _interleaved_ms(forms: dict, be, reference) -> dict:
    """Median milliseconds of each of ``forms`` (callables), REPEATS synchronized calls each,
    interleaved after one warm-up round."""
    import time

    times = {name: [] for name in forms}
    for repeat in range(REPEATS + 1):
        for name, form in forms.items():
            be.synchronize(reference)
            start = time.perf_counter()
            be.synchronize(form())
            if repeat:                          # the first round warms up
                times[name].append(time.perf_counter() - start)
    return {f"{name}_ms": float(np.median(t)) * 1e3 for name, t in times.items()}


def _softmax_forms(tokens: int, device: str) -> dict:
    """The A/B of the weight forms on the structured kernel's K (see the module's text)."""
    from attngeom.geometry_proofs.gauge.accelerated import kl_attention as kla
    from attngeom.geometry_proofs.gauge.accelerated import kl_structured
    config, be, mu, sigma, frames = _inputs(tokens, False, device)
    kl = kla.kl_attention_structured(mu, sigma, frames, config.kappa, be).kl
    forms = {"in_place": lambda: kl_structured._weights_in_place(kl, config.kappa, be),
             "fused_neg_div": lambda: kla.softmax_last(-kl / config.kappa, be),
             "fused": lambda: kla.softmax_last(kl_structured._causal_logits(kl, config.kappa, False, be), be)}
    timed = _interleaved_ms(forms, be, kl)
    reference = forms["in_place"]()
    difference = max(float((reference - forms[name]()).abs().max()) for name in ("fused_neg_div", "fused"))
    return {"tokens": tokens, "elements": int(kl.numel()), **timed, "max_abs_difference": difference}


def _clone_forms(tokens: int) -> dict:
    """The graphed kernel (CUDA, full Sigma) with and without the clones of its outputs."""
    from attngeom.geometry_proofs.gauge.accelerated.kl_attention_graphs import kl_attention_graphed

    config, be, mu, sigma, frames = _inputs(tokens, False, "cuda")
    forms = {clone: (lambda clone=clone: kl_attention_graphed(mu, sigma, frames, config.kappa, be,
                                                                clone=clone == "cloned").values)
             for clone in ("cloned", "static")}
    return {"tokens": tokens, **_interleaved_ms(forms, be, mu)}


#: the statistics' settings timed by :func:`_fused_forms`: (mode, unroll, warps, stream); the
#: default (fused, unrolled, 2 warps, tile products) first, then the CUDA C kernel (mode "warp",
#: warps a block).  The streamed Triton settings (stream = 1) were timed in the seventh GPU
#: session, slower in every setting (docs/gauge-attention.md), and are left out
TRITON_SETTINGS = [("fused", 0, 2, 0), ("warp", 0, 1, 0), ("warp", 0, 2, 0), ("warp", 0, 4, 0),
                   ("warp", 0, 8, 0), ("products", 0, 4, 0)]


def _fused_forms(tokens: int, settings=None) -> dict:
    """The Triton per-token statistics (:mod:`attngeom.geometry_proofs.gauge.accelerated.kl_statistics_triton`) against
    the library calls on CUDA, full Sigma: in each of ``settings`` (mode, unroll, warps,
    stream; default :data:`TRITON_SETTINGS`) the statistics alone (with the largest difference of
    their query and key rows from the library calls' and the kernel's registers and spills),
    the eager kernel and the graphed kernel; the same three with the library calls."""
    from attngeom.geometry_proofs.gauge.accelerated import kl_attention as kla
    from attngeom.geometry_proofs.gauge.accelerated import kl_pairwise, kl_primitives
    from attngeom.geometry_proofs.gauge.accelerated import kl_statistics_triton as fused
    config, be, mu, sigma, frames = _inputs(tokens, False, "cuda")
    head, skew_frames = kl_primitives._frame_spec(frames)
    rotation = kla.frame_exp(skew_frames, be)

    def library():
        return kl_pairwise._full_statistics(mu, sigma, rotation, head, be)

    def within(context, call):
        def run():
            with context():
                return call()
        return run

    def statistics(setting):
        return within(lambda: fused.configured(*setting),
                      lambda: fused.full_statistics(mu, sigma, rotation, head, be, library))

    def eager():
        return kla.kl_attention_structured(mu, sigma, frames, config.kappa, be).values

    def graphed():
        return kla.kl_attention_structured(mu, sigma, frames, config.kappa, be, graphs=True).values

    settings = TRITON_SETTINGS if settings is None else settings
    names = {setting: "{}_u{}_w{}_s{}".format(*setting) for setting in settings}
    failed = {}                 # a setting that cannot compile here: recorded, left out (kept in
    for setting in settings:    # FAILED it would send every later call to the library, in
        statistics(setting)()   # WARP_FAILED every later "warp" call to Triton)
        for record in (fused.FAILED, fused.WARP_FAILED):
            if record:
                failed[names[setting]] = record.pop()
    settings = [setting for setting in settings if names[setting] not in failed]
    forms = {"statistics_" + names[setting]: statistics(setting) for setting in settings}
    forms["statistics_library"] = library
    for setting in settings:
        configured = (lambda setting=setting: fused.configured(*setting))
        forms |= {"eager_" + names[setting]: within(configured, eager),
                  "graphed_" + names[setting]: within(configured, graphed)}
    forms |= {"eager_library": within(fused.disabled, eager), "graphed_library": within(fused.disabled, graphed)}
    timed = _interleaved_ms({name: (lambda form=form: _last(form())) for name, form in forms.items()}, be, mu)
    want = kla.pairwise_operands(library(), be, offsets=True)
    difference = {"statistics_" + names[setting]: max(float((a - b).abs().max()) for a, b in zip(
        kla.pairwise_operands(statistics(setting)(), be, offsets=True), want)) for setting in settings}
    launches = {"{}_u{}_w{}_s{}_n{}_{}".format(*key): value for key, value in fused.LAUNCHES.items()}
    return {"tokens": tokens, **timed, "max_abs_difference_of_rows": difference, "kernels": launches,
            "failed": failed}


def _last(result):
    """A tensor of ``result`` to synchronize on (a dict of statistics: its nu)."""
    return result["nu"] if isinstance(result, dict) else result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    parser.add_argument("--n", default="128,1024", help="comma-separated sequence lengths")
    parser.add_argument("--out", default=os.environ.get("OUT", "tests/benchmarks/results"))
    parser.add_argument("--triton", default=None,
                        help="the Triton settings to time, mode:unroll:warps:stream,... (default TRITON_SETTINGS)")
    args = parser.parse_args(argv)
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        print("profile_gauge_kernel: no CUDA device on this machine")
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = []
    for tokens in (int(x) for x in args.n.split(",")):
        for diagonal in (False, True):
            for graphed in ((False, True) if args.device == "cuda" else (False,)):
                table, summary = _profile_case(tokens, diagonal, args.device, graphed)
                name = f"gauge_profile_{args.device}_{summary['sigma']}_n{tokens}{'_graphed' if graphed else ''}.txt"
                (out / name).write_text(table)
                report.append(summary)
                print(f"N={tokens} {summary['sigma']:8s} graphed={graphed}: "
                      f"{summary['device_launches_per_call']:.0f} device launches / call, "
                      f"top: {summary['top'][0]['name']} {summary['top'][0]['self_us_per_call']:.0f} us")
    forms, clones, fused = [], [], []
    for tokens in (int(x) for x in args.n.split(",")):
        forms.append(_softmax_forms(tokens, args.device))
        print(f"N={tokens} weights: in place {forms[-1]['in_place_ms']:.3f} ms, fused after -K/kappa "
              f"{forms[-1]['fused_neg_div_ms']:.3f} ms, fused after K*(-1/kappa) {forms[-1]['fused_ms']:.3f} ms, "
              f"max |diff| {forms[-1]['max_abs_difference']:.1e}")
        if args.device == "cuda":
            clones.append(_clone_forms(tokens))
            print(f"N={tokens} graphed, full Sigma: outputs cloned {clones[-1]['cloned_ms']:.3f} ms, "
                  f"static {clones[-1]['static_ms']:.3f} ms")
            fused.append(_fused_forms(tokens, None if args.triton is None else [
                (mode, int(unroll), int(warps), int(stream)) for mode, unroll, warps, stream in
                (item.split(":") for item in args.triton.split(","))]))
            print(f"N={tokens} Triton statistics: " + ", ".join(
                f"{k[:-3]} {v:.3f} ms" for k, v in fused[-1].items() if k.endswith("_ms"))
                  + f"; rows max |diff| {fused[-1]['max_abs_difference_of_rows']}; kernels {fused[-1]['kernels']}"
                  + f"; failed {fused[-1]['failed']}")
    (out / f"gauge_profile_{args.device}.json").write_text(json.dumps(
        {"cases": report, "softmax_ab": forms, "clone_ab": clones, "fused_ab": fused}, indent=1))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
