// The matrix-product micro-kernel, included by kernels.cpp (built for the
// project's target) and by kernels_avx512.cpp (built for AVX-512, chosen at run
// time when the CPU has it). Everything here has internal linkage, so the two
// builds of it never mix. See kernels.cpp for the design.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "autograd/fast/kernels.h"
#include "autograd/fast/parallel.h"
#include "autograd/scalar.h"

namespace ag::inline AG_PRECISION::kernels {

namespace {

// The tile is MR rows by NR_BYTES of columns, sized so that its accumulators
// and one row of b fit in the vector registers: with AVX2's sixteen 256-bit
// registers, 6 x 16 floats (12 accumulators, 2 for b, 1 for a broadcast value).
#ifndef SEQGRAD_TILE_ROWS
#define SEQGRAD_TILE_ROWS 6
#endif
#ifndef SEQGRAD_TILE_BYTES
#define SEQGRAD_TILE_BYTES 64
#endif
constexpr int MR = SEQGRAD_TILE_ROWS;
constexpr int NR = static_cast<int>(SEQGRAD_TILE_BYTES / sizeof(Scalar));

// A vector register's worth of Scalars, as GCC's (and Clang's) vector
// extension: arithmetic on it is one instruction on the whole register.
#if defined(__AVX512F__)
constexpr int kVectorBytes = 64;
#elif defined(__AVX__)
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;
#endif
template <int LANES>
struct VectorOf {
  typedef Scalar type __attribute__((vector_size(LANES * sizeof(Scalar))));  // (`using` drops the attribute here)
};
template <class Vec>
inline Vec load(const Scalar* p) {
  Vec v;
  __builtin_memcpy(&v, p, sizeof v);  // one unaligned load
  return v;
}
template <class Vec>
inline void store(Scalar* p, Vec v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// n Scalars of the scratch vector v, from an address that is a multiple of 64
// bytes: a vector load from a packed panel then never straddles two cache lines
// (a large vector's own storage starts 16 bytes past a page, so every 512-bit
// load of a panel did, and a load split over two lines costs two).
inline Scalar* aligned_scratch(std::vector<Scalar>& v, std::size_t n) {
  constexpr std::size_t kAlign = 64, kSpare = kAlign / sizeof(Scalar);
  v.resize(n + kSpare);
  const auto address = reinterpret_cast<std::uintptr_t>(v.data());
  return v.data() + ((kAlign - address % kAlign) % kAlign) / sizeof(Scalar);
}

// The epilogue (kernels.h) on v, the sum for row r and column j of c (a
// Scalar, or a vector of them for columns j, j + 1, ...), on its way to c.
template <class T>
inline void finish(const Epilogue& e, T v, int r, int j, Scalar* c, long ldc) {
  if (e.bias) v += load<T>(e.bias + j);  // the sum + bias: the same bits as c = bias, then c += a @ b
  if (e.relu) v = v > 0 ? v : 0;
  if (e.gate) v = load<T>(e.gate + r * e.ldg + j) > 0 ? v : 0;
  Scalar* cj = c + r * ldc + j;
  if (!e.overwrite) v += load<T>(cj);
  store(cj, v);
}

// Asks for the cache lines of a block (rows x cols, rows ld apart) ahead of a
// loop that reads it, or writes it (WRITE), into the cache levels LOCALITY
// says (__builtin_prefetch's: 3 all of them, 2 from the second on).
template <bool WRITE, int LOCALITY>
inline void prefetch_block(const Scalar* x, long ld, int rows, int cols) {
  constexpr int kLine = 64 / static_cast<int>(sizeof(Scalar));
  for (int r = 0; r < rows; ++r)
    for (int q = 0; q < cols; q += kLine) __builtin_prefetch(x + r * ld + q, WRITE, LOCALITY);
}

// Multiply-adds below which a product stays on one thread: a second one costs more than it gives.
constexpr double kParallelWork = 1 << 20;
// Whether gemm shares a product of M N K multiply-adds between the threads.
inline bool shared_by_threads(int M, int K, int N) {
  return static_cast<double>(M) * N * K >= kParallelWork && pool_threads() > 1 && !inside_parallel_chunk();
}
// Values below which a copy (packing, a transpose) stays on one thread.
constexpr double kParallelCopy = 1 << 16;
// Rows of a from which a product copies its panels of b first (see gemm): a
// panel is read once for every tile of rows, so fewer rows than this do not
// pay for the copy.
#ifndef SEQGRAD_PACK_ROWS
#define SEQGRAD_PACK_ROWS 128
#endif
constexpr int kPackRows = SEQGRAD_PACK_ROWS;
// Full panels of b from which a product also copies its rows of a (see pack_rows).
#ifndef SEQGRAD_PACK_PANELS
#define SEQGRAD_PACK_PANELS 2
#endif
constexpr int kPackPanels = SEQGRAD_PACK_PANELS;
// A shared dimension longer than this is taken in blocks of it (see gemm): 128
// rows of a panel of b, 64 floats wide, are 32 KiB, which stay in the L1 cache.
#ifndef SEQGRAD_DEPTH_BLOCK
#define SEQGRAD_DEPTH_BLOCK 128
#endif
constexpr int kDepthBlock = SEQGRAD_DEPTH_BLOCK;
// A thread's rows of c are taken in blocks of this many, each block through
// every panel of b before the next: a block's rows of a (192 x 128 floats of a
// depth block, 96 KiB) stay in the L2 cache while the panels pass, where a
// thread's whole share (2048 rows of the wide workload, 1 MiB a depth block)
// came from further out for every panel. The order of each element's sum is
// unchanged: the same bits.
#ifndef SEQGRAD_ROW_BLOCK
#define SEQGRAD_ROW_BLOCK 192
#endif
constexpr int kRowBlock = SEQGRAD_ROW_BLOCK;
// Rows of c per thread below which the threads share a product by its column
// panels instead of its rows (see gemm): a thread's pieces of rows (a quarter
// of its share) would be smaller than a block.
constexpr int kColumnSplitRows = 4 * kRowBlock;

// The FMA units at their most: kChains independent chains of vector
// multiply-adds, `rounds` rounds each, touching no memory (enough chains to
// cover the instruction's latency on two units; few enough to stay in
// AVX2's sixteen registers). Returns the FLOPs done, two per lane and FMA.
inline double fma_rounds(long rounds) {
  constexpr int kLanes = kVectorBytes / static_cast<int>(sizeof(Scalar));
  constexpr int kChains = 12;
  using Vec = typename VectorOf<kLanes>::type;
  // The starting values and factors come through a volatile, so the compiler
  // cannot know them: with constants, it proved that the chain starting at 1
  // stays at 1 (1 * 0.999 + 0.001 rounds to 1), dropped it, and the loop did
  // 11 chains' work while this counted 12 (the peak read 9% high).
  volatile Scalar seed = 1;
  const Scalar one = seed;
  Vec acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = Vec{} + one * static_cast<Scalar>(i + 1);
  const Vec m = Vec{} + one * static_cast<Scalar>(0.999), add = Vec{} + one * static_cast<Scalar>(0.001);
  for (long r = 0; r < rounds; ++r)
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * m + add;
  Vec sum{};
  for (int i = 0; i < kChains; ++i) sum += acc[i];
  volatile Scalar sink = sum[0];  // so that the loop is not dropped
  (void)sink;
  return 2.0 * static_cast<double>(rounds) * kChains * kLanes;
}

// The epilogue of the block of c that starts at row i, column j.
inline Epilogue epilogue_at(const Epilogue& e, int i, int j) {
  Epilogue out = e;
  if (e.bias) out.bias = e.bias + j;
  if (e.gate) out.gate = e.gate + static_cast<long>(i) * e.ldg + j;
  return out;
}

// c[r, j] += sum_k a(r, k) * b[k, j] for an MR x NR tile (rows and cols may be
// smaller at the edges), with a(r, k) = a[r * a_rs + k * a_cs]: row-major a has
// (a_rs, a_cs) = (K, 1), a transposed one (1, M). UNIT_RS says a_rs is 1: then
// a tile's values of a for one k sit side by side behind one pointer, and the
// compiler need not keep a pointer per row (16 rows of them do not fit in the
// registers, and reloading them cost the narrow products half their speed).
// The accumulators are vectors, not an array of Scalars, so that they stay in
// registers through the epilogue too (an array went through the stack there).
//
// tile_part does it over k in [k0, k1) only, for a long shared dimension cut
// into blocks (see gemm). Its sums start from `part` (ROWS x COLS, what the
// blocks before added) unless FIRST, and go back there unless LAST, when they
// are finished into c: each element's chain of additions is the one over the
// whole of K in one go, so the bits are the same.
template <int ROWS, int COLS, bool UNIT_RS, bool FIRST, bool LAST>
inline void tile_part(const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c, long ldc, int k0,
                      int k1, const Epilogue& e, Scalar* part) {
  constexpr int kLanes = std::min(COLS, kVectorBytes / static_cast<int>(sizeof(Scalar)));
  constexpr int V = COLS / kLanes;
  using Vec = typename VectorOf<kLanes>::type;
  if constexpr (UNIT_RS) a_rs = 1;
  Vec acc[ROWS][V] = {};
  if constexpr (!FIRST) {
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) acc[r][v] = load<Vec>(part + r * COLS + v * kLanes);
  }
  for (int k = k0; k < k1; ++k) {
    const Scalar* bk = b + k * ldb;
    const Scalar* ak = a + k * a_cs;
    Vec bv[V];
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) bv[v] = load<Vec>(bk + v * kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; ++r) {
      const Scalar ark = ak[r * a_rs];
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) acc[r][v] += ark * bv[v];
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < ROWS; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      if constexpr (LAST) {
        finish(e, acc[r][v], r, v * kLanes, c, ldc);
      } else {
        store(part + r * COLS + v * kLanes, acc[r][v]);
      }
    }
  }
}

// A tile over the whole of K: see tile_part.
template <int ROWS, int COLS, bool UNIT_RS>
inline void tile(const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c, long ldc, int K,
                 const Epilogue& e) {
  tile_part<ROWS, COLS, UNIT_RS, true, true>(a, a_rs, a_cs, b, ldb, c, ldc, 0, K, e, nullptr);
}

// The same at the ragged edges, with run-time sizes (cols < NR). Like the
// tile, it sums over k from zero and adds the sum to c once, so that every
// element of c is the same sum in the same order whichever path computed it.
inline void edge(const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c, long ldc, int K, int rows,
                 int cols, const Epilogue& e) {
  for (int r = 0; r < rows; ++r) {
    Scalar acc[NR] = {};
    for (int k = 0; k < K; ++k) {
      const Scalar ark = a[r * a_rs + k * a_cs];
      const Scalar* bk = b + k * ldb;
      for (int j = 0; j < cols; ++j) acc[j] += ark * bk[j];
    }
    for (int j = 0; j < cols; ++j) finish(e, acc[j], r, j, c, ldc);
  }
}

// How the tiles of a block of rows read a: the tile at row i starts at
// at(i), and its value for row r and k at at(i)[r * rs + k * cs].
struct RowsOfA {
  const Scalar* first;  // the tile at row i0
  long per_row;         // how far the tile at row i + 1 would start from the one at row i
  long rs, cs;
  int i0;
  const Scalar* at(int i) const { return first + (i - i0) * per_row; }
};

// Rows [i_begin, i_end) of a transposed a (row i's value for k at
// a[i + k * a_cs]) copied into `to` tile by tile, MR rows a tile, each tile's MR values
// for one k side by side: a tile then reads one stream of consecutive values,
// where it read a new line a_cs values apart for every k (rows of a 1 or
// 4 KiB apart, which fall in a few sets of the L1 cache and were read again
// from further out by every panel). The copy moves values only: the same
// sums, the same bits.
inline void pack_tiles(const Scalar* a, long a_cs, int K, int i_begin, int i_end, Scalar* to) {
  const int n = i_end - i_begin, tiles = (n + MR - 1) / MR;
  // kChunk values of k at a time: their rows of a stay in the L1 cache while
  // every tile takes its values from them.
  constexpr int kChunk = 16;
  for (int k0 = 0; k0 < K; k0 += kChunk) {
    const int k1 = std::min(K, k0 + kChunk);
    for (int t = 0; t < tiles; ++t) {
      const Scalar* from = a + i_begin + t * MR;
      Scalar* tile_to = to + static_cast<long>(t) * MR * K;
      const int rows = std::min(MR, n - t * MR);
      // (a copy of a fixed size where it can be, which is a move or two: std::copy_n
      // called memmove for every 24 bytes)
      for (long k = k0; k < k1; ++k) {
        if (rows == MR) {
          __builtin_memcpy(tile_to + k * MR, from + k * a_cs, MR * sizeof(Scalar));
        } else {
          __builtin_memcpy(tile_to + k * MR, from + k * a_cs, static_cast<std::size_t>(rows) * sizeof(Scalar));
        }
      }
    }
  }
}

// The same into a scratch each thread keeps its own, read as RowsOfA.
inline RowsOfA pack_rows(const Scalar* a, long a_cs, int K, int i_begin, int i_end) {
  thread_local std::vector<Scalar> packed;
  const int tiles = (i_end - i_begin + MR - 1) / MR;
  Scalar* to = aligned_scratch(packed, static_cast<std::size_t>(tiles) * MR * K);
  pack_tiles(a, a_cs, K, i_begin, i_end, to);
  return {to, K, 1, MR, i_begin};
}

// Full panels [p_begin, p_end) of b (K x NR each, its rows side by side) copied into `to`, one after the other.
inline void copy_full_panels(const Scalar* b, long ldb, int K, int p_begin, int p_end, Scalar* to) {
  for (int p = p_begin; p < p_end; ++p)
    for (int k = 0; k < K; ++k)
      __builtin_memcpy(to + (static_cast<long>(p) * K + k) * NR, b + static_cast<long>(k) * ldb + p * NR,
                       NR * sizeof(Scalar));  // (inline moves: std::copy_n called memmove for each row)
}

// All the full panels of b (K, N) copied as gemm copies them, into storage
// (aligned as gemm's own copy): returns where they start, or null when b has none.
inline const Scalar* copy_all_panels(const Scalar* b, long ldb, int K, int N, std::vector<Scalar>& storage) {
  const int full_panels = N / NR;
  if (full_panels == 0) return nullptr;
  Scalar* to = aligned_scratch(storage, static_cast<std::size_t>(full_panels) * K * NR);
  copy_full_panels(b, ldb, K, 0, full_panels, to);
  return to;
}

// c (M, N, rows ldc apart) += a (M, K, read through strides) @ b (K, N, rows ldb apart),
// each element finished by the epilogue e on its way to c (see kernels.h).
// `panels`, when given, is b's full panels as copy_all_panels copied them.
inline void gemm(const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c, long ldc, int M, int K,
                 int N, const Epilogue& e, const Scalar* panels = nullptr) {
  // Rows of c in tiles of MR, in blocks of kRowBlock rows; each block walks
  // the column panels of b, so a K x NR panel stays in the L1 cache while the
  // block's row tiles pass over it.
  //
  // The full column panels of b, copied one after the other (K x NR each, its
  // rows side by side) when enough rows of a will pass over them. In place,
  // rows of b a power of two of bytes apart (1, 3 or 4 KiB here) fall in the
  // same few sets of the L1 cache, so a panel does not stay there however
  // short the block of K. The copy moves values only: the same sums, the same bits.
  const int full_panels = N / NR;
  const bool parallel = shared_by_threads(M, K, N);
  // Two ways to share the product between the threads (see the end): by rows
  // of c, or, when there are too few rows for every thread's share to be a
  // whole block of them, by column panels.
  const bool by_columns = parallel && M < kColumnSplitRows * pool_threads() && full_panels >= pool_threads();
  // A b that many products read comes with its panels copied once (`panels`).
  const Scalar* packed_b = full_panels > 0 ? panels : nullptr;
  Scalar* copy_to = nullptr;  // where this product copies them, if it does
  // Copies full panels [p_begin, p_end) of b into copy_to.
  auto copy_panels = [&](int p_begin, int p_end) { copy_full_panels(b, ldb, K, p_begin, p_end, copy_to); };
  if (!packed_b && full_panels > 0 && ldb != NR && M >= kPackRows) {
    // (the caller's buffer: inside a chunk, `packed` is the worker's own)
    thread_local std::vector<Scalar> packed;
    packed_b = copy_to = aligned_scratch(packed, static_cast<std::size_t>(full_panels) * K * NR);
    // Split by columns, each thread copies its own panels as it comes to them
    // (below). Else the threads copy them together when there is enough to
    // copy: one thread alone spent 3% of a wide step here while the others waited.
    if (by_columns) {
      // (copied in `columns` below)
    } else if (parallel && static_cast<double>(full_panels) * K * NR >= kParallelCopy) {
      parallel_for(full_panels, copy_panels);
    } else {
      copy_panels(0, full_panels);
    }
  }
  // One column panel of `COLS` columns starting at j, over rows [i_begin, i_end)
  // of a as `rows_a` reads them (see RowsOfA).
  // A narrower panel takes more rows per tile, so that it keeps as many
  // accumulators in flight as a full one (a head of width 16 has one vector per row).
  auto panel = [&]<int COLS, bool UNIT_RS>(int j, int i_begin, int i_end, const RowsOfA& rows_a) {
    constexpr int ROWS = std::min(MR * NR / COLS, UNIT_RS ? 16 : 8);
    const long a_rs = rows_a.rs, a_cs = rows_a.cs;
    const bool from_pack = COLS == NR && packed_b;
    const Scalar* bj = from_pack ? packed_b + static_cast<long>(j / NR) * K * NR : b + j;
    const long ldbj = from_pack ? NR : ldb;
    if constexpr (COLS == NR) {
      // A long K in blocks of kDepthBlock: one block's K x NR panel of b stays
      // in the L1 cache while every row tile passes over it, instead of coming
      // from the L2 cache again for each tile. The tiles' partial sums wait in
      // `part` between the blocks.
      if (K > kDepthBlock) {
        thread_local std::vector<Scalar> part;
        Scalar* const part_at = aligned_scratch(part, static_cast<std::size_t>(i_end - i_begin + ROWS) * COLS);
        for (int k0 = 0; k0 < K; k0 += kDepthBlock) {
          const int k1 = std::min(K, k0 + kDepthBlock);
          const bool first = k0 == 0, last = k1 == K;
          for (int i = i_begin; i < i_end; i += ROWS) {
            const int n_rows = std::min(ROWS, i_end - i);
            const Scalar* ai = rows_a.at(i);
            Scalar* ci = c + static_cast<long>(i) * ldc + j;
            Scalar* pi = part_at + static_cast<std::size_t>(i - i_begin) * COLS;
            const Epilogue ej = epilogue_at(e, i, j);
            auto run = [&]<bool FIRST, bool LAST>() {
              [&]<int... R>(std::integer_sequence<int, R...>) {
                ((n_rows == R + 1
                      ? tile_part<R + 1, COLS, UNIT_RS, FIRST, LAST>(ai, a_rs, a_cs, bj, ldbj, ci, ldc, k0, k1, ej, pi)
                      : void()),
                 ...);
              }
              (std::make_integer_sequence<int, ROWS>{});
            };
            if (first) {
              run.template operator()<true, false>();
            } else if (last) {
              run.template operator()<false, true>();
            } else {
              run.template operator()<false, false>();
            }
          }
        }
        return;
      }
    }
    for (int i = i_begin; i < i_end; i += ROWS) {
      const int n_rows = std::min(ROWS, i_end - i);
      const Scalar* ai = rows_a.at(i);
      Scalar* ci = c + static_cast<long>(i) * ldc + j;
      const Epilogue ej = epilogue_at(e, i, j);
      // The output two tiles down, asked for now: outputs such as the FFN's hidden
      // layer are written to buffers last touched a step ago (docs/performance.md).
      constexpr int kAhead = 2;
      // (A write to a line that is not in the cache waits for it to be read in first.)
      if (i + (kAhead + 1) * ROWS <= i_end) prefetch_block<true, 3>(ci + kAhead * ROWS * ldc, ldc, ROWS, COLS);
      // A full tile, or the rows left at the bottom as one smaller tile.
      [&]<int... R>(std::integer_sequence<int, R...>) {
        ((n_rows == R + 1 ? tile<R + 1, COLS, UNIT_RS>(ai, a_rs, a_cs, bj, ldbj, ci, ldc, K, ej) : void()), ...);
      }
      (std::make_integer_sequence<int, ROWS>{});
    }
  };
  // The same, built for the way rows_a reads a (unit row stride or not).
  auto panel_of = [&]<int COLS>(int j, int i_begin, int i_end, const RowsOfA& rows_a) {
    if (rows_a.rs == 1) {
      panel.template operator()<COLS, true>(j, i_begin, i_end, rows_a);
    } else {
      panel.template operator()<COLS, false>(j, i_begin, i_end, rows_a);
    }
  };
  // Rows [i_begin, i_end) through full panels [p_begin, p_end), then, with
  // `edge`, the columns left at the edge.
  const RowsOfA plain{a, a_rs, a_rs, a_cs, 0};
  // The full panels read a transposed a from a packed copy when there are
  // enough panels to pay for it (see pack_tiles): each block its own rows, or,
  // split by columns, all of them from one copy the threads share (each of a
  // thread's pieces copied every block again: 5% of a wide step on two threads).
  const bool pack_a = a_rs == 1 && full_panels >= kPackPanels && M >= kPackRows;
  RowsOfA shared_a = plain;
  if (pack_a && by_columns) {
    thread_local std::vector<Scalar> packed;
    const int tiles = (M + MR - 1) / MR;
    Scalar* to = aligned_scratch(packed, static_cast<std::size_t>(tiles) * MR * K);
    parallel_for(tiles, [&](int t_begin, int t_end) {
      pack_tiles(a, a_cs, K, t_begin * MR, std::min(M, t_end * MR), to + static_cast<long>(t_begin) * MR * K);
    });
    shared_a = {to, K, 1, MR, 0};
  }
  auto block = [&](int i_begin, int i_end, int p_begin, int p_end, bool edges) {
    const RowsOfA full = !pack_a ? plain : by_columns ? shared_a : pack_rows(a, a_cs, K, i_begin, i_end);
    for (int p = p_begin; p < p_end; ++p) panel_of.template operator()<NR>(p * NR, i_begin, i_end, full);
    if (!edges) return;
    int j = full_panels * NR;
    // Narrower panels for what is left (a head of width 16, a vocabulary of 11...).
    if (j + NR / 2 <= N) panel_of.template operator()<NR / 2>(j, i_begin, i_end, plain), j += NR / 2;
    if (j + NR / 4 <= N) panel_of.template operator()<NR / 4>(j, i_begin, i_end, plain), j += NR / 4;
    if (j < N) {
      edge(a + i_begin * a_rs, a_rs, a_cs, b + j, ldb, c + static_cast<long>(i_begin) * ldc + j, ldc, K,
           i_end - i_begin, N - j, epilogue_at(e, i_begin, j));
    }
  };
  // Row tiles [tile_begin, tile_end) through every panel, a block of rows at a time.
  auto rows = [&](int tile_begin, int tile_end) {
    const int i_end = std::min(M, tile_end * MR);
    for (int i = tile_begin * MR; i < i_end; i += kRowBlock)
      block(i, std::min(i_end, i + kRowBlock), 0, full_panels, true);
  };
  // Every row through full panels [p_begin, p_end) (and the edge columns with the last).
  auto columns = [&](int p_begin, int p_end) {
    if (copy_to) copy_panels(p_begin, p_end);
    for (int i = 0; i < M; i += kRowBlock) block(i, std::min(M, i + kRowBlock), p_begin, p_end, p_end == full_panels);
  };
  // Every element of c is the same sum in the same order whichever thread
  // computes it and whichever way the work is split: the same bits.
  if (!parallel) {
    rows(0, (M + MR - 1) / MR);
  } else if (by_columns) {
    // Each thread reads all of a and its own panels of b. Split by rows, a
    // share of 256 rows (the wide FFN's backward, 256 x 256 x 1024) was cut in
    // pieces of 36, each of which read the whole of b again: two threads were
    // only 1.3x faster than one.
    parallel_for(full_panels, columns);
  } else {
    parallel_for((M + MR - 1) / MR, rows);
  }
}

}  // namespace

}  // namespace ag::inline AG_PRECISION::kernels
