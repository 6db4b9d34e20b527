// Runs attngeom/geometry_proofs/gauge/accelerated/csrc/kl_statistics_warp.cu on the CPU, for the tests
// (tests/test_kl_statistics_cuda.py): each warp is 32 std::threads in lockstep at every
// shuffle (two barriers a shuffle), blocks one after another.  It checks the kernel's
// arithmetic and its lane logic, not its speed.  Build (g++ >= 10):
//   g++ -std=c++20 -O1 -pthread -shared -fPIC -DNN=<n> -DT=<double|float>
//       -DKERNEL='"<path of the .cu>"' warp_emulation.cpp -o <library>
#include <barrier>
#include <cmath>
#include <thread>
#include <vector>

using std::log;
using std::sqrt;

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__

struct Index { unsigned x; };
thread_local Index threadIdx, blockIdx, blockDim;

struct Warp {
    std::barrier<> sync{32};
    double exchange[32];
};
thread_local Warp* warp;

template <class V> V __shfl_sync(unsigned, V value, int source) {
    const int lane = threadIdx.x & 31;
    warp->exchange[lane] = (double)value;
    warp->sync.arrive_and_wait();
    const V got = (V)warp->exchange[source & 31];
    warp->sync.arrive_and_wait();
    return got;
}

template <class V> V __shfl_xor_sync(unsigned mask, V value, int offset) {
    return __shfl_sync(mask, value, (int)(threadIdx.x & 31) ^ offset);
}

#include KERNEL

extern "C" int emulate(int blocks, int threads_per_block,
                       const T* sigma, const T* mu, const T* rotation, T* query, T* key, T* nu, T* logdet,
                       signed char* ok, int count, int heads, int tokens,
                       int stride_b, int stride_h, int stride_t, int stride_r, int stride_c) {
    if (threads_per_block % 32) return 1;
    for (int block = 0; block < blocks; ++block) {
        for (int first = 0; first < threads_per_block; first += 32) {
            Warp shared;
            std::vector<std::thread> lanes;
            for (int lane = 0; lane < 32; ++lane)
                lanes.emplace_back([&, lane] {
                    threadIdx.x = first + lane;
                    blockIdx.x = block;
                    blockDim.x = threads_per_block;
                    warp = &shared;
                    kl_statistics_warp(sigma, mu, rotation, query, key, nu, logdet, ok, count, heads, tokens,
                                       stride_b, stride_h, stride_t, stride_r, stride_c);
                });
            for (auto& thread : lanes) thread.join();
        }
    }
    return 0;
}
