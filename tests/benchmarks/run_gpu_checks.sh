#!/usr/bin/env bash
# Every check that needs CUDA (issues 6, 7, 8, 14, 15, 16), for a session that has the GPU machine.
# Run from the repository root on that machine, one part per call (each stays under the
# device tool's 10-minute limit):
#
#   bash tests/benchmarks/run_gpu_checks.sh tests        # all -m gpu tests: K = 1 on CUDA
#                                                        # (issue 8), CUDA Jacobians, the
#                                                        # d = 8 quartics at B = 10^6 (issue 7)
#   bash tests/benchmarks/run_gpu_checks.sh reach-torch  # how far delta, l go in a minute
#   bash tests/benchmarks/run_gpu_checks.sh reach-jax    #   (issue 6)
#   bash tests/benchmarks/run_gpu_checks.sh throughput   # the backend table incl. *-cuda
#   bash tests/benchmarks/run_gpu_checks.sh hyperbolic   # RGT Prop 9.3 cost table on CUDA
#   bash tests/benchmarks/run_gpu_checks.sh hyperbolic-attention  # Gram-form RGT kernels on CUDA (issue 26)
#   bash tests/benchmarks/run_gpu_checks.sh hyperbolic-compiled   # the same through torch.compile
#                                                        # (reduce-overhead), N = 128 and 2048
#   bash tests/benchmarks/run_gpu_checks.sh gauge        # GT KL attention on CUDA (issue 14): the CLI
#                                                        # (eager and graphed) and the torch sweep
#   bash tests/benchmarks/run_gpu_checks.sh gauge-graphs # the sweep from CUDA graphs (issue 26) and
#                                                        # the kernel's gpu tests (with the per-token
#                                                        # statistics' in both modes: CUDA C, Triton)
#   bash tests/benchmarks/run_gpu_checks.sh gauge-graphs-warp  # the graphed sweep with the CUDA C
#                                                        # per-token statistics (one warp a matrix,
#                                                        # ATTNGEOM_GT_STATISTICS=warp, the default
#                                                        # since the eighth session; JSON under
#                                                        # warp/) and their gpu test
#   bash tests/benchmarks/run_gpu_checks.sh gauge-jax    # the jax-cuda sweep (slowest: compiles per N)
#   bash tests/benchmarks/run_gpu_checks.sh gauge-compiled  # the CLI with torch.compile (reduce-overhead),
#                                                        # N = 128, 512, 1024 (GAUGE_COMPILED_N), full and diagonal Sigma
#   bash tests/benchmarks/run_gpu_checks.sh gauge-profile  # where the GT kernel's CUDA time goes
#                                                        # (torch.profiler, eager and graphed)
#   bash tests/benchmarks/run_gpu_checks.sh gec          # GEC experiment, 1 seed x 2 epochs on CUDA (issue 16)
#   bash tests/benchmarks/run_gpu_checks.sh tests-other  # `tests` without the files of `gauge` and
#                                                        # `hyperbolic-attention` (after those two)
#   bash tests/benchmarks/run_gpu_checks.sh all          # the parts in one call, each under a time
#                                                        # limit (GPU_PARTS), results as one
#                                                        # archive gpu_results.tgz (the device tool
#                                                        # brings back at most 8 files)
#
# The machine has torch, jax, sympy, numpy, networkx, click, matplotlib and pytest, but not
# python-flint or galgebra: carry them as wheels in .whl (see docs/kernels.md, "GPU runs").
# attngeom itself is not installed there: run from the repository root, the CLI as
# `python3 -m attngeom` (the repository root is then on sys.path; `python3 attngeom/cli.py`
# would put attngeom/ there instead, and `import attngeom` fails).
# Results (JSON and logs) go to $OUT when set (the device tool's output folder), else to
# tests/benchmarks/results/gpu.
set -o pipefail
part=${1:?usage: run_gpu_checks.sh tests|tests-other|reach-torch|reach-jax|throughput|gauge|gauge-graphs|gauge-graphs-warp|gauge-jax|gauge-profile|hyperbolic|hyperbolic-attention|hyperbolic-compiled|gauge-compiled|gec|all}
if [ "$part" = all ]; then
    # priority order, each part:seconds; a part that runs past its limit is stopped and the
    # next one starts (the defaults sum to 460 s, under the device tool's 10-minute call).
    # Measured on an H200, seventh session (2026-11-26): gauge-graphs 61 s (with the Triton
    # kernel's tests), gauge-profile 27 s (8 settings at N = 128 and 1024, each compiles
    # once), gauge 80 s (it hit an 80 s limit once), hyperbolic-compiled 66 s,
    # hyperbolic-attention 105 s.  Eighth session (2026-11-27, an H200): gauge-graphs-warp
    # 57 s, gauge-profile 26 s, gauge-graphs 72 s, gauge 76 s, hyperbolic-compiled 66 s,
    # hyperbolic-attention 114 s (411 s in all).  Since then the CUDA C statistics are the
    # default, so gauge-graphs times them and gauge-graphs-warp left the defaults (the A/B
    # with Triton, in one process: gauge-profile's fused_ab).  tests-other ran past
    # 185 s there (13 of 15 tests; the Triton tests compile per n and dtype): give it 300 s
    # in a second call (GPU_PARTS="tests-other:300"), which the 460 s of defaults leave room for.
    # gauge-compiled (the compiled kernel: never the fast form, 3.8-5.8x the layer at N = 1024
    # in four sessions), throughput (30-35 s, unchanged code, measured in five sessions),
    # tests-other, gauge-jax (jax-cuda meets the targets, measured twice), reach-torch,
    # reach-jax (a minute per point) and gec (a smoke run) are left out: each to its own call
    # (GPU_PARTS=...)
    export GAUGE_COMPILED_N=${GAUGE_COMPILED_N:-1024}
    final=${OUT:-tests/benchmarks/results/gpu}
    scratch=$(mktemp -d)
    for spec in ${GPU_PARTS:-gauge-graphs:90 gauge-profile:60 gauge:110 hyperbolic-compiled:70 hyperbolic-attention:130}; do
        each=${spec%%:*}; limit=${spec##*:}
        start=$SECONDS
        OUT="$scratch" timeout "$limit" bash "$0" "$each" > /dev/null 2>&1
        echo "$each: exit $? after $((SECONDS - start)) s (limit $limit s)" | tee -a "$scratch/parts.txt"
    done
    mkdir -p "$final" && tar czf "$final/gpu_results.tgz" -C "$scratch" . && exit 0
fi
out=${OUT:-tests/benchmarks/results/gpu}
mkdir -p "$out"
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$out/gpu.csv" || exit 1
# jax reserves 75% of the GPU at its first use; torch and jax share one pytest process here,
# so let both allocate on demand (otherwise the d = 8 quartics at 10^6 points run out).
export ATTNGEOM_BENCH_DIR="$out" PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
run() { python3 -m pytest -p no:cacheprovider -o addopts="--strict-markers" -s -q -rs "$@" 2>&1 | tee "$out/$part.log"; }
case "$part" in
    tests)       run -m gpu tests --ignore=tests/benchmarks/test_dimension_reach.py ;;
    tests-other) run -m gpu tests --ignore=tests/benchmarks/test_dimension_reach.py \
                     --ignore=tests/benchmarks/test_gauge_attention_bench.py --ignore=tests/test_gauge_attention.py \
                     --ignore=tests/benchmarks/test_hyperbolic_attention_bench.py ;;
    reach-torch) run -m "benchmark and gpu" "tests/benchmarks/test_dimension_reach.py::test_reach_on_cuda[torch]" ;;
    reach-jax)   run -m "benchmark and gpu" "tests/benchmarks/test_dimension_reach.py::test_reach_on_cuda[jax]" ;;
    throughput)  run -m benchmark tests/benchmarks/test_throughput.py::test_throughput_table ;;
    hyperbolic)  run -m "benchmark and gpu" tests/benchmarks/test_hyperbolic_cost_bench.py ;;
    hyperbolic-attention) python3 -m attngeom benchmark hyperbolic-attention --backend torch --device cuda --n 128,256,512,1024,2048,4096 --cuda-graphs --json > "$out/hyperbolic_attention_cli.json" 2> "$out/hyperbolic_attention_cli.err"; run -m "benchmark and gpu" -k "not compiled" tests/benchmarks/test_hyperbolic_attention_bench.py ;;
    hyperbolic-compiled) run -m "benchmark and gpu" tests/benchmarks/test_hyperbolic_attention_bench.py::test_hyperbolic_attention_compiled_cuda ;;
    gauge)       # the CLI first (eager and from CUDA graphs, issue 26; one N per call), then the
                 # torch sweep N = 128 ... 4096 (test_cuda[torch]); the part fails if a call or
                 # pytest fails
                 rc=0
                 for n in 128 4096; do
                     python3 -m attngeom benchmark gauge-attention --backend torch --device cuda --n "$n" --no-direct \
                         --repeats 7 --cuda-graphs --json > "$out/gauge_attention_cli_graphs_n$n.json" \
                         2>> "$out/gauge_attention_cli.err" || rc=1
                 done
                 run -m gpu "tests/benchmarks/test_gauge_attention_bench.py::test_cuda[torch]" || rc=1
                 exit $rc ;;
    gauge-graphs) run -m gpu tests/benchmarks/test_gauge_attention_bench.py::test_cuda_graphs tests/test_gauge_attention.py \
                      tests/test_kl_statistics_triton.py ;;
    gauge-graphs-warp) mkdir -p "$out/warp"
                 ATTNGEOM_GT_STATISTICS=warp ATTNGEOM_BENCH_DIR="$out/warp" run -m gpu \
                     tests/benchmarks/test_gauge_attention_bench.py::test_cuda_graphs tests/test_kl_statistics_cuda.py ;;
    gauge-jax)   run -m gpu "tests/benchmarks/test_gauge_attention_bench.py::test_cuda[jax]" ;;
    gauge-compiled) # one CLI call per N and Sigma (each compiles once: ~25 s on an H100), JSON
                 # each; GAUGE_COMPILED_N overrides the token counts
                 rc=0
                 for n in ${GAUGE_COMPILED_N:-128 512 1024}; do
                     for sigma in full diagonal; do
                         flag=$([ "$sigma" = diagonal ] && echo --diagonal)
                         python3 -m attngeom benchmark gauge-attention --backend torch --device cuda --n "$n" --no-direct \
                             --repeats 7 --compile $flag --json > "$out/gauge_attention_cli_compiled_${sigma}_n$n.json" \
                             2>> "$out/gauge_attention_cli_compiled.err" || rc=1
                     done
                 done
                 exit $rc ;;
    gauge-profile) PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} python3 tests/benchmarks/profile_gauge_kernel.py --device cuda --n 128,1024 --out "$out" 2>&1 | tee "$out/$part.log" ;;
    gec)         python3 -m attngeom experiment gec --seeds 0 --epochs 2 --workers 1 --device cuda --out "$out/gec" 2>&1 | tee "$out/gec_cli.log"; run -m gpu tests/test_gec_experiment.py ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
esac
